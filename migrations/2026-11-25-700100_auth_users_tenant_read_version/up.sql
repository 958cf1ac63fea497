-- `auth.users` versions per tenant (core_tenant_read_versions): a login (it
-- writes last_login_at) or a user write keeps other tenants' user and role
-- lists kept. TRUNCATE has no transition table: it still bumps `auth.users`
-- itself, which every reader's sum includes.
DROP TRIGGER users_read_version ON users;
CREATE TRIGGER users_read_version_insert AFTER INSERT ON users
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('auth.users');
CREATE TRIGGER users_read_version_update AFTER UPDATE ON users
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('auth.users');
CREATE TRIGGER users_read_version_delete AFTER DELETE ON users
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('auth.users');
