DROP TRIGGER business_rules_version ON business_rules;
DROP FUNCTION business_rules_bump_version();
DROP TABLE business_rule_versions;
DROP TABLE business_rule_logs;
DROP TABLE business_rule_set_members;
DROP TABLE business_rule_sets;
DROP TABLE business_rules;
