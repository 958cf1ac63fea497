-- Each rule that calls webhooks signs them with a secret of its own
-- (Standard Webhooks), stored encrypted with the server's key ring
-- (`enc:v2:...`, bound to the rule). Kept out of the rule's tracked state:
-- undo and redo of rule writes never touch it.
ALTER TABLE business_rules ADD COLUMN webhook_secret TEXT;
