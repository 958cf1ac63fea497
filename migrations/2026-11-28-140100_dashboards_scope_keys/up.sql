-- Dashboard rows belong to a tenant and (optionally) an organization: bind
-- them (no row of a tenant or organization that does not exist) and index
-- the columns so deleting or scanning one tenant's or organization's rows
-- does not read the whole table (crates/core/tests/api/schema.rs).
ALTER TABLE dashboard_layouts
    ADD CONSTRAINT dashboard_layouts_tenant_fk FOREIGN KEY (tenant_id) REFERENCES tenants (id),
    ADD CONSTRAINT dashboard_layouts_organization_fk FOREIGN KEY (organization_id) REFERENCES organizations (id);
CREATE INDEX dashboard_layouts_tenant ON dashboard_layouts (tenant_id);
CREATE INDEX dashboard_layouts_organization ON dashboard_layouts (organization_id)
    WHERE organization_id IS NOT NULL;

ALTER TABLE dashboard_role_widgets
    ADD CONSTRAINT dashboard_role_widgets_tenant_fk FOREIGN KEY (tenant_id) REFERENCES tenants (id),
    ADD CONSTRAINT dashboard_role_widgets_organization_fk FOREIGN KEY (organization_id) REFERENCES organizations (id);
CREATE INDEX dashboard_role_widgets_organization ON dashboard_role_widgets (organization_id)
    WHERE organization_id IS NOT NULL;

ALTER TABLE dashboard_user_widgets
    ADD CONSTRAINT dashboard_user_widgets_tenant_fk FOREIGN KEY (tenant_id) REFERENCES tenants (id),
    ADD CONSTRAINT dashboard_user_widgets_organization_fk FOREIGN KEY (organization_id) REFERENCES organizations (id);
CREATE INDEX dashboard_user_widgets_tenant ON dashboard_user_widgets (tenant_id);
CREATE INDEX dashboard_user_widgets_organization ON dashboard_user_widgets (organization_id)
    WHERE organization_id IS NOT NULL;
