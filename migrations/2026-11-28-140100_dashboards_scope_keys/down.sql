DROP INDEX IF EXISTS dashboard_user_widgets_organization;
DROP INDEX IF EXISTS dashboard_user_widgets_tenant;
ALTER TABLE dashboard_user_widgets
    DROP CONSTRAINT IF EXISTS dashboard_user_widgets_organization_fk,
    DROP CONSTRAINT IF EXISTS dashboard_user_widgets_tenant_fk;
DROP INDEX IF EXISTS dashboard_role_widgets_organization;
ALTER TABLE dashboard_role_widgets
    DROP CONSTRAINT IF EXISTS dashboard_role_widgets_organization_fk,
    DROP CONSTRAINT IF EXISTS dashboard_role_widgets_tenant_fk;
DROP INDEX IF EXISTS dashboard_layouts_organization;
DROP INDEX IF EXISTS dashboard_layouts_tenant;
ALTER TABLE dashboard_layouts
    DROP CONSTRAINT IF EXISTS dashboard_layouts_organization_fk,
    DROP CONSTRAINT IF EXISTS dashboard_layouts_tenant_fk;
