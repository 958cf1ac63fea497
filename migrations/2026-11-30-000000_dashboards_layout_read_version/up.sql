-- `dashboards.layouts` read versions per tenant: a write to a layout, a
-- role's or a user's widget list bumps its tenant's version once per
-- statement, so `GET /dashboards/layout` keeps its answer (read_cache) only
-- while nothing it was computed from changed.
CREATE TRIGGER dashboard_layouts_read_version_insert AFTER INSERT ON dashboard_layouts
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('dashboards.layouts');
CREATE TRIGGER dashboard_layouts_read_version_update AFTER UPDATE ON dashboard_layouts
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('dashboards.layouts');
CREATE TRIGGER dashboard_layouts_read_version_delete AFTER DELETE ON dashboard_layouts
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('dashboards.layouts');
CREATE TRIGGER dashboard_role_widgets_read_version_insert AFTER INSERT ON dashboard_role_widgets
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('dashboards.layouts');
CREATE TRIGGER dashboard_role_widgets_read_version_update AFTER UPDATE ON dashboard_role_widgets
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('dashboards.layouts');
CREATE TRIGGER dashboard_role_widgets_read_version_delete AFTER DELETE ON dashboard_role_widgets
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('dashboards.layouts');
CREATE TRIGGER dashboard_user_widgets_read_version_insert AFTER INSERT ON dashboard_user_widgets
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('dashboards.layouts');
CREATE TRIGGER dashboard_user_widgets_read_version_update AFTER UPDATE ON dashboard_user_widgets
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('dashboards.layouts');
CREATE TRIGGER dashboard_user_widgets_read_version_delete AFTER DELETE ON dashboard_user_widgets
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('dashboards.layouts');
