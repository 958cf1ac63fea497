DROP TRIGGER tenants_read_version_truncate ON tenants;
DROP TRIGGER tenants_read_version ON tenants;
