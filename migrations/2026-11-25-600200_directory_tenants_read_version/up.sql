-- Kept lists show tenant names (the first bump creates the version's row).
CREATE TRIGGER tenants_read_version AFTER INSERT OR UPDATE OR DELETE ON tenants
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_read_version('directory.tenants');
CREATE TRIGGER tenants_read_version_truncate AFTER TRUNCATE ON tenants
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_read_version('directory.tenants');
