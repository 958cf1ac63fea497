-- `attachments.library` read versions per tenant (core_tenant_read_versions):
-- every write to a tenant's attachments or partitions bumps its version once
-- per statement (a global partition, without a tenant, bumps the name
-- itself, which every tenant's page sums), so `GET /attachments/library`
-- keeps its answer (read_cache) only while nothing it shows changed.
-- Organization visibility moves `acl_version`, which every kept answer
-- checks too.
CREATE TRIGGER attachments_read_version_insert AFTER INSERT ON attachments
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('attachments.library');
CREATE TRIGGER attachments_read_version_update AFTER UPDATE ON attachments
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('attachments.library');
CREATE TRIGGER attachments_read_version_delete AFTER DELETE ON attachments
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('attachments.library');
CREATE TRIGGER attachment_partitions_read_version_insert AFTER INSERT ON attachment_partitions
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('attachments.library');
CREATE TRIGGER attachment_partitions_read_version_update AFTER UPDATE ON attachment_partitions
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('attachments.library');
CREATE TRIGGER attachment_partitions_read_version_delete AFTER DELETE ON attachment_partitions
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('attachments.library');
