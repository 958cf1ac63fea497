-- `api_keys.keys` read versions per tenant (core_tenant_read_versions):
-- every write to a tenant's keys (create, revoke, the batched last-use
-- flush) bumps its version once per statement, so `GET /api_keys/keys`
-- keeps its answer (read_cache) only while no key of the tenant changed.
-- Role and organization names in the list move `acl_version`, which every
-- kept answer checks too.
CREATE TRIGGER api_keys_read_version_insert AFTER INSERT ON api_keys
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('api_keys.keys');
CREATE TRIGGER api_keys_read_version_update AFTER UPDATE ON api_keys
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('api_keys.keys');
CREATE TRIGGER api_keys_read_version_delete AFTER DELETE ON api_keys
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('api_keys.keys');
