DROP TABLE IF EXISTS mail_outbox;
