-- `customers.deals` read versions per tenant (core_tenant_read_versions):
-- every write bumps its tenant's version once per statement, so dashboards
-- keep a widget answer over deals only while no deal of the tenant changed.
CREATE TRIGGER customer_deals_read_version_insert AFTER INSERT ON customer_deals
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('customers.deals');
CREATE TRIGGER customer_deals_read_version_update AFTER UPDATE ON customer_deals
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('customers.deals');
CREATE TRIGGER customer_deals_read_version_delete AFTER DELETE ON customer_deals
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('customers.deals');
