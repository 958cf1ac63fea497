ALTER TABLE business_rules DROP COLUMN webhook_secret;
