-- One call gives a table the three statement triggers that bump a read
-- model's per-tenant version (`stoa_bump_tenant_read_version`, see
-- core_tenant_read_versions) on insert, update and delete, named
-- `<table>_read_version_<insert|update|delete>` as the earlier migrations
-- wrote them out by hand. `stoa_drop_read_version_triggers` undoes it.
CREATE FUNCTION stoa_read_version_triggers(tbl regclass, model text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format(
        'CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS stoa_new '
        'FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version(%L)',
        tbl::text || '_read_version_insert', tbl, model);
    EXECUTE format(
        'CREATE TRIGGER %I AFTER UPDATE ON %s REFERENCING OLD TABLE AS stoa_old '
        'NEW TABLE AS stoa_new FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version(%L)',
        tbl::text || '_read_version_update', tbl, model);
    EXECUTE format(
        'CREATE TRIGGER %I AFTER DELETE ON %s REFERENCING OLD TABLE AS stoa_old '
        'FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version(%L)',
        tbl::text || '_read_version_delete', tbl, model);
END $$;

CREATE FUNCTION stoa_drop_read_version_triggers(tbl regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP TRIGGER %I ON %s', tbl::text || '_read_version_insert', tbl);
    EXECUTE format('DROP TRIGGER %I ON %s', tbl::text || '_read_version_update', tbl);
    EXECUTE format('DROP TRIGGER %I ON %s', tbl::text || '_read_version_delete', tbl);
END $$;
