ALTER TABLE event_outbox DROP COLUMN origin;
