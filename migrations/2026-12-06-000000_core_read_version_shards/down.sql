-- Back to one row per name (the functions exactly as their migrations
-- wrote them); the shards of a name are summed into one row.
CREATE OR REPLACE FUNCTION stoa_bump_read_version() RETURNS trigger AS $$
BEGIN
    INSERT INTO read_versions AS v (name) VALUES (TG_ARGV[0])
    ON CONFLICT (name) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE OR REPLACE FUNCTION stoa_bump_tenant_read_version() RETURNS trigger AS $$
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
DROP FUNCTION stoa_read_version_shard();
CREATE TEMPORARY TABLE stoa_read_version_sums AS
    SELECT name, sum(version)::bigint AS version FROM read_versions GROUP BY name;
DELETE FROM read_versions;
ALTER TABLE read_versions DROP CONSTRAINT read_versions_pkey;
ALTER TABLE read_versions DROP COLUMN shard;
ALTER TABLE read_versions ADD PRIMARY KEY (name);
INSERT INTO read_versions (name, version) SELECT name, version FROM stoa_read_version_sums;
DROP TABLE stoa_read_version_sums;
