DROP FUNCTION stoa_bump_tenant_read_version();
