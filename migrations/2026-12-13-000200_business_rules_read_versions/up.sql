-- Read versions per tenant (core_tenant_read_versions) of the business-rule
-- lists, so `GET /business_rules/rules`, `/business_rules/logs` and
-- `/business_rules/sets` keep their answers (read_cache) while nothing they
-- show changed: every write to a tenant's rules bumps `business_rules.rules`
-- (the log list shows rule names and types, so it depends on it too), every
-- insert or prune of its execution logs `business_rules.logs`, every write
-- to its rule sets `business_rules.sets`, once per statement.
SELECT stoa_read_version_triggers('business_rules', 'business_rules.rules');
SELECT stoa_read_version_triggers('business_rule_logs', 'business_rules.logs');
SELECT stoa_read_version_triggers('business_rule_sets', 'business_rules.sets');
