DROP TABLE IF EXISTS event_outbox;
DROP TABLE IF EXISTS access_logs;
DROP TABLE IF EXISTS action_logs;
