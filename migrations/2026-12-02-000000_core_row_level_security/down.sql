-- Undoes up.sql, except the cluster-wide role `stoa_app` itself: other
-- databases of the cluster may use it.
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN
        SELECT c.relname FROM pg_policy p
        JOIN pg_class c ON c.oid = p.polrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND p.polname = 'stoa_tenant'
    LOOP
        EXECUTE format('DROP POLICY stoa_tenant ON %I', t.relname);
        EXECUTE format('ALTER TABLE %I NO FORCE ROW LEVEL SECURITY', t.relname);
        EXECUTE format('ALTER TABLE %I DISABLE ROW LEVEL SECURITY', t.relname);
    END LOOP;
    FOR t IN
        SELECT c.relname FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'v'
    LOOP
        EXECUTE format('ALTER VIEW %I RESET (security_invoker)', t.relname);
    END LOOP;
END
$$;

ALTER DEFAULT PRIVILEGES IN SCHEMA public
    REVOKE USAGE, SELECT, UPDATE ON SEQUENCES FROM stoa_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    REVOKE SELECT, INSERT, UPDATE, DELETE ON TABLES FROM stoa_app;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM stoa_app;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM stoa_app;
REVOKE USAGE ON SCHEMA public FROM stoa_app;
