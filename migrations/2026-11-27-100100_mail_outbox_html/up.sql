-- The HTML body of a message sent with both an HTML and a text part.
ALTER TABLE mail_outbox ADD COLUMN html text;
