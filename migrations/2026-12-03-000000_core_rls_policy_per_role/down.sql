-- Undoes up.sql: back to the first shape (one policy for every role, with
-- the bypass setting OR-ed in), except the cluster-wide role `stoa_bypass`
-- itself: other databases of the cluster may use it.
DO $$
DECLARE
    t record;
    visible text;
BEGIN
    FOR t IN
        SELECT c.relname, a.attnotnull FROM pg_policy p
        JOIN pg_class c ON c.oid = p.polrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id'
        WHERE n.nspname = 'public' AND p.polname = 'stoa_bypass'
    LOOP
        IF t.attnotnull THEN
            visible := 'tenant_id = NULLIF(current_setting(''stoa.tenant_id'', true), '''')::uuid';
        ELSE
            visible := 'tenant_id = NULLIF(current_setting(''stoa.tenant_id'', true), '''')::uuid'
                || ' OR (tenant_id IS NULL AND COALESCE(current_setting(''stoa.tenant_id'', true), '''') <> '''')';
        END IF;
        EXECUTE format('DROP POLICY stoa_bypass ON %I', t.relname);
        EXECUTE format('DROP POLICY stoa_tenant ON %I', t.relname);
        EXECUTE format(
            'CREATE POLICY stoa_tenant ON %I USING ('
            'current_setting(''stoa.bypass'', true) = ''on'' OR %s)',
            t.relname, visible);
    END LOOP;
END
$$;

DROP FUNCTION stoa_tenant_policies(regclass);

ALTER DEFAULT PRIVILEGES IN SCHEMA public
    REVOKE USAGE, SELECT, UPDATE ON SEQUENCES FROM stoa_bypass;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    REVOKE SELECT, INSERT, UPDATE, DELETE ON TABLES FROM stoa_bypass;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM stoa_bypass;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM stoa_bypass;
REVOKE USAGE ON SCHEMA public FROM stoa_bypass;
