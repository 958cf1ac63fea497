-- Row-level security: the second tenant wall (see docs/architecture.md,
-- "Tenancy and scope", and crates/core/src/rls.rs).
--
-- The server's pooled connections `SET ROLE stoa_app`, a role that owns no
-- table, so the policies below apply to it; migrations keep running as the
-- owner. Each connection carries two session settings, set by
-- `Db::conn()` from the task's scope:
--   stoa.tenant_id  the tenant whose rows are visible ('' = none)
--   stoa.bypass     'on' for an explicit, audited cross-tenant path
-- A connection with neither sees no tenant rows and cannot write any.

-- The role is cluster-wide: create it once, tolerating a concurrent creator
-- (tests migrate many databases at once).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'stoa_app') THEN
        BEGIN
            CREATE ROLE stoa_app NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
    -- A non-superuser owner must be a member to `SET ROLE stoa_app`.
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
       AND NOT pg_has_role(current_user, 'stoa_app', 'MEMBER') THEN
        EXECUTE format('GRANT stoa_app TO %I', current_user);
    END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO stoa_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO stoa_app;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO stoa_app;
-- Tables and sequences of later migrations (run by the same owner).
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO stoa_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO stoa_app;

-- Views run with their owner's rights, and the owner bypasses row-level
-- security: make them check the caller instead (access_logs).
DO $$
DECLARE
    v record;
BEGIN
    FOR v IN
        SELECT c.relname FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'v'
    LOOP
        EXECUTE format('ALTER VIEW %I SET (security_invoker = true)', v.relname);
    END LOOP;
END
$$;

-- Every table with a uuid `tenant_id` column, found rather than listed, so
-- tables reshaped by earlier migrations (monthly-partitioned logs) get
-- theirs too. Partitions are skipped: a policy on a partitioned parent
-- applies to every query through the parent.
--
-- Exceptions (none today): tables listed in `exempt` below, each with the
-- reason on its line. crates/core/tests/schema_rules.rs holds the same list.
DO $$
DECLARE
    t record;
    exempt text[] := ARRAY[]::text[];
    visible text;
BEGIN
    FOR t IN
        SELECT c.oid, c.relname, a.attnotnull
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id'
            AND NOT a.attisdropped AND a.atttypid = 'uuid'::regtype
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
          AND NOT c.relispartition
          AND c.relname <> ALL (exempt)
    LOOP
        -- Rows of the scope's tenant; rows shared by every tenant
        -- (`tenant_id` null, e.g. super administrators, global defaults)
        -- only when some tenant is in scope.
        IF t.attnotnull THEN
            visible := 'tenant_id = NULLIF(current_setting(''stoa.tenant_id'', true), '''')::uuid';
        ELSE
            visible := 'tenant_id = NULLIF(current_setting(''stoa.tenant_id'', true), '''')::uuid'
                || ' OR (tenant_id IS NULL AND COALESCE(current_setting(''stoa.tenant_id'', true), '''') <> '''')';
        END IF;
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t.relname);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t.relname);
        IF EXISTS (SELECT 1 FROM pg_policy
                   WHERE polrelid = t.oid AND polname = 'stoa_tenant') THEN
            EXECUTE format('DROP POLICY stoa_tenant ON %I', t.relname);
        END IF;
        EXECUTE format(
            'CREATE POLICY stoa_tenant ON %I USING ('
            'current_setting(''stoa.bypass'', true) = ''on'' OR %s)',
            t.relname, visible);
    END LOOP;
END
$$;
