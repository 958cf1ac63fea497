ALTER TABLE action_logs DROP CONSTRAINT action_logs_source_key_check;
UPDATE action_logs SET source_key = 'api' WHERE source_key = 'business_rule';
ALTER TABLE action_logs ADD CONSTRAINT action_logs_source_key_check
    CHECK (source_key IN ('ui', 'api', 'system'));
