SELECT stoa_drop_read_version_triggers('business_rule_sets');
SELECT stoa_drop_read_version_triggers('business_rule_logs');
SELECT stoa_drop_read_version_triggers('business_rules');
