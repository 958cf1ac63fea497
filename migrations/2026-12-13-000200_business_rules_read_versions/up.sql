-- Read versions per tenant (core_tenant_read_versions) of the business-rule
-- lists, so `GET /business_rules/rules` and `/business_rules/logs` keep
-- their answers (read_cache) while nothing they show changed: every write to
-- a tenant's rules bumps `business_rules.rules` (the log list shows rule
-- names and types, so it depends on it too), every insert or prune of its
-- execution logs bumps `business_rules.logs`, every write to its rule sets
-- `business_rules.sets` (`GET /business_rules/sets`), once per statement.
CREATE TRIGGER business_rules_read_version_insert AFTER INSERT ON business_rules
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('business_rules.rules');
CREATE TRIGGER business_rules_read_version_update AFTER UPDATE ON business_rules
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('business_rules.rules');
CREATE TRIGGER business_rules_read_version_delete AFTER DELETE ON business_rules
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('business_rules.rules');
CREATE TRIGGER business_rule_logs_read_version_insert AFTER INSERT ON business_rule_logs
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('business_rules.logs');
CREATE TRIGGER business_rule_logs_read_version_update AFTER UPDATE ON business_rule_logs
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('business_rules.logs');
CREATE TRIGGER business_rule_logs_read_version_delete AFTER DELETE ON business_rule_logs
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('business_rules.logs');
CREATE TRIGGER business_rule_sets_read_version_insert AFTER INSERT ON business_rule_sets
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('business_rules.sets');
CREATE TRIGGER business_rule_sets_read_version_update AFTER UPDATE ON business_rule_sets
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('business_rules.sets');
CREATE TRIGGER business_rule_sets_read_version_delete AFTER DELETE ON business_rule_sets
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('business_rules.sets');
