-- Row-level security, second shape: a policy per role instead of a bypass
-- setting OR-ed into every tenant's policy (docs/architecture.md, "Tenancy
-- and scope").
--
-- Why: `current_setting('stoa.bypass') = 'on' OR tenant_id = <setting>` is
-- no index condition, so every row a scan visited evaluated both settings
-- and parsed the uuid as a filter, and the planner, which cannot tell what
-- the OR keeps, misjudged filtered lists (the deals list of 1M deals chose a
-- top-N sort of the whole stage: p99 20 -> 197 ms). Now:
--   stoa_app     (tenant and closed scopes) sees `tenant_id = <setting>`, an
--                index condition evaluated once per scan;
--   stoa_bypass  (the bypass pool: explicit, audited cross-tenant work) has
--                a policy of its own that shows every row.
-- Postgres applies only the policies of the current role. A BYPASSRLS role
-- would do the same with no policy, but only a superuser may create one;
-- a policy per role needs nothing the owner lacks.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'stoa_bypass') THEN
        BEGIN
            CREATE ROLE stoa_bypass NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
    -- A non-superuser owner must be a member to `SET ROLE stoa_bypass`.
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
       AND NOT pg_has_role(current_user, 'stoa_bypass', 'MEMBER') THEN
        EXECUTE format('GRANT stoa_bypass TO %I', current_user);
    END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO stoa_bypass;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO stoa_bypass;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO stoa_bypass;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO stoa_bypass;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO stoa_bypass;

-- The policies of one tenant table. A migration that adds a table with a
-- `tenant_id` column ends with `SELECT stoa_tenant_policies('<table>');`
-- (crates/core/tests/api/schema.rs fails until it does).
CREATE FUNCTION stoa_tenant_policies(tbl regclass) RETURNS void
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
    nullable boolean;
    visible text;
BEGIN
    SELECT NOT a.attnotnull INTO nullable
    FROM pg_attribute a
    WHERE a.attrelid = tbl AND a.attname = 'tenant_id' AND NOT a.attisdropped
      AND a.atttypid = 'uuid'::regtype;
    IF nullable IS NULL THEN
        RAISE EXCEPTION '% has no uuid tenant_id column', tbl;
    END IF;
    visible := 'tenant_id = NULLIF(current_setting(''stoa.tenant_id'', true), '''')::uuid';
    IF nullable THEN
        -- Rows shared by every tenant (`tenant_id` null: super
        -- administrators, global defaults), only when a tenant is in scope.
        visible := visible || ' OR (tenant_id IS NULL'
            || ' AND COALESCE(current_setting(''stoa.tenant_id'', true), '''') <> '''')';
    END IF;
    EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', tbl);
    EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', tbl);
    EXECUTE format('DROP POLICY IF EXISTS stoa_tenant ON %s', tbl);
    EXECUTE format('DROP POLICY IF EXISTS stoa_bypass ON %s', tbl);
    EXECUTE format('CREATE POLICY stoa_tenant ON %s TO stoa_app USING (%s)', tbl, visible);
    EXECUTE format('CREATE POLICY stoa_bypass ON %s TO stoa_bypass USING (true)', tbl);
END
$$;

-- Every table that has the first shape's policy (the tables with a uuid
-- `tenant_id`, partitions excepted, exemptions honoured there).
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN
        SELECT p.polrelid FROM pg_policy p
        JOIN pg_class c ON c.oid = p.polrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND p.polname = 'stoa_tenant'
    LOOP
        PERFORM stoa_tenant_policies(t.polrelid::regclass);
    END LOOP;
END
$$;
