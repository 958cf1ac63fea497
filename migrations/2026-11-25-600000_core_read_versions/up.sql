-- Versions of read models, one row per name ('auth.users', ...). Each server
-- process keeps list answers tagged with the versions their page statement
-- read (stoa_core::http::read_cache); statement-level triggers on every table
-- a read model is computed from bump its version in the writing transaction,
-- so a kept answer is served again only while no such write has committed.
CREATE TABLE read_versions (
    name text PRIMARY KEY,
    version bigint NOT NULL DEFAULT 1
);

-- Statement-level trigger function: bumps the version named by the trigger's
-- argument (creating its row on first use), one bump per statement.
CREATE FUNCTION stoa_bump_read_version() RETURNS trigger AS $$
BEGIN
    INSERT INTO read_versions AS v (name) VALUES (TG_ARGV[0])
    ON CONFLICT (name) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
