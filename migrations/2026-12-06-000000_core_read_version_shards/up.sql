-- Read versions in shards. Every write to a read model's table bumps its
-- `<name>@<tenant>` row in the writing transaction and holds that row's lock
-- until commit, so two transactions writing the same tenant's rows queued
-- on one version row from their first write to their commit: the two
-- workers of a bulk job over 100,000 deals spent 7.9 of their 22 s of
-- statement time waiting on each other. Each connection now bumps the row
-- of its own shard (its backend pid modulo 8), so concurrent writers almost
-- always take different rows. Readers already sum every row of a name (the
-- primary key leads with it), and a sum of counters that only grow still
-- grows with every committed write, which is all a kept answer's check
-- needs (stoa_core::http::read_cache).
ALTER TABLE read_versions ADD COLUMN shard smallint NOT NULL DEFAULT 0;
ALTER TABLE read_versions DROP CONSTRAINT read_versions_pkey;
ALTER TABLE read_versions ADD PRIMARY KEY (name, shard);

CREATE FUNCTION stoa_read_version_shard() RETURNS smallint AS $$
    SELECT (pg_backend_pid() % 8)::smallint
$$ LANGUAGE sql STABLE;

CREATE OR REPLACE FUNCTION stoa_bump_read_version() RETURNS trigger AS $$
BEGIN
    INSERT INTO read_versions AS v (name, shard) VALUES (TG_ARGV[0], stoa_read_version_shard())
    ON CONFLICT (name, shard) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

-- One shard for all the rows one statement bumps, in name order as before,
-- so that two statements never wait on each other's rows in opposite orders.
CREATE OR REPLACE FUNCTION stoa_bump_tenant_read_version() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO read_versions AS v (name, shard)
        SELECT DISTINCT TG_ARGV[0] || COALESCE('@' || tenant_id::text, ''), stoa_read_version_shard()
        FROM stoa_new ORDER BY 1
        ON CONFLICT (name, shard) DO UPDATE SET version = v.version + 1;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO read_versions AS v (name, shard)
        SELECT DISTINCT TG_ARGV[0] || COALESCE('@' || tenant_id::text, ''), stoa_read_version_shard()
        FROM stoa_old ORDER BY 1
        ON CONFLICT (name, shard) DO UPDATE SET version = v.version + 1;
    ELSE
        -- An update may move a row between tenants: both are bumped.
        INSERT INTO read_versions AS v (name, shard)
        SELECT DISTINCT TG_ARGV[0] || COALESCE('@' || tenant_id::text, ''), stoa_read_version_shard()
        FROM (SELECT tenant_id FROM stoa_old UNION ALL SELECT tenant_id FROM stoa_new) AS stoa_rows
        ORDER BY 1
        ON CONFLICT (name, shard) DO UPDATE SET version = v.version + 1;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
