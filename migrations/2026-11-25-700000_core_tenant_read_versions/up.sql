-- Per-tenant read versions. A statement-level trigger with transition tables
-- (`stoa_old`, `stoa_new`) bumps `<name>@<tenant>` once for every tenant
-- whose rows the statement changed (`<name>` for rows without a tenant), in
-- name order so that two statements never wait on each other's rows in
-- opposite orders. Readers sum `<name>` and `<name>@<tenant>` for a page of
-- one tenant, every `<name>@...` for a page of all tenants
-- (stoa_core::http::read_cache::versions): a write in one tenant no longer
-- invalidates every tenant's kept pages, and writers in different tenants
-- no longer queue on one version row until they commit.
CREATE FUNCTION stoa_bump_tenant_read_version() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO read_versions AS v (name)
        SELECT DISTINCT TG_ARGV[0] || COALESCE('@' || tenant_id::text, '')
        FROM stoa_new ORDER BY 1
        ON CONFLICT (name) DO UPDATE SET version = v.version + 1;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO read_versions AS v (name)
        SELECT DISTINCT TG_ARGV[0] || COALESCE('@' || tenant_id::text, '')
        FROM stoa_old ORDER BY 1
        ON CONFLICT (name) DO UPDATE SET version = v.version + 1;
    ELSE
        -- An update may move a row between tenants: both are bumped.
        INSERT INTO read_versions AS v (name)
        SELECT DISTINCT TG_ARGV[0] || COALESCE('@' || tenant_id::text, '')
        FROM (SELECT tenant_id FROM stoa_old UNION ALL SELECT tenant_id FROM stoa_new) AS stoa_rows
        ORDER BY 1
        ON CONFLICT (name) DO UPDATE SET version = v.version + 1;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
