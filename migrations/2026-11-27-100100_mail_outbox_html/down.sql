ALTER TABLE mail_outbox DROP COLUMN html;
