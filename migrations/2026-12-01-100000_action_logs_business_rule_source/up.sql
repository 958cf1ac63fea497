-- Writes a business rule makes as an API key (CALL_OPEN_MERCATO) are
-- recorded with source 'business_rule', so the rules' trigger skips them.
ALTER TABLE action_logs DROP CONSTRAINT action_logs_source_key_check;
ALTER TABLE action_logs ADD CONSTRAINT action_logs_source_key_check
    CHECK (source_key IN ('ui', 'api', 'system', 'business_rule'));
