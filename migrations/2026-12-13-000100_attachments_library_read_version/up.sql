-- `attachments.library` read versions per tenant (core_tenant_read_versions):
-- every write to a tenant's attachments or partitions bumps its version once
-- per statement (a global partition, without a tenant, bumps the name
-- itself, which every tenant's page sums), so `GET /attachments/library`
-- keeps its answer (read_cache) only while nothing it shows changed.
-- Organization visibility moves `acl_version`, which every kept answer
-- checks too.
SELECT stoa_read_version_triggers('attachments', 'attachments.library');
SELECT stoa_read_version_triggers('attachment_partitions', 'attachments.library');
