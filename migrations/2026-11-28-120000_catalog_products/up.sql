-- Catalog products (stoa-catalog). Deleted for good, as the reference's
-- delete command does: undo puts the row back with its id (the action log
-- keeps the whole state).
CREATE TABLE catalog_products (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid NOT NULL REFERENCES organizations (id),
    title text NOT NULL CHECK (length(title) BETWEEN 1 AND 255),
    subtitle text CHECK (length(subtitle) <= 255),
    description text CHECK (length(description) <= 4000),
    sku text CHECK (sku ~ '^[A-Za-z0-9._-]{1,191}$'),
    handle text CHECK (handle ~ '^[a-z0-9_-]{1,150}$'),
    product_type text NOT NULL DEFAULT 'simple'
        CHECK (product_type IN ('simple', 'configurable', 'virtual', 'downloadable', 'bundle', 'grouped')),
    is_active boolean NOT NULL DEFAULT true,
    price_amount numeric(18, 4) CHECK (price_amount >= 0),
    price_currency text CHECK (price_currency ~ '^[A-Z]{3}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    -- An amount means nothing without its currency.
    CONSTRAINT catalog_products_price_currency CHECK (price_amount IS NULL OR price_currency IS NOT NULL)
);

-- SKUs and handles are unique per tenant (the reference: per organization
-- and tenant; see crates/catalog/README.md).
CREATE UNIQUE INDEX catalog_products_tenant_sku ON catalog_products (tenant_id, sku);
CREATE UNIQUE INDEX catalog_products_tenant_handle ON catalog_products (tenant_id, handle);

-- The list's orders, each ending with the id (keyset paging).
CREATE INDEX catalog_products_tenant_created ON catalog_products (tenant_id, created_at, id);
CREATE INDEX catalog_products_tenant_updated ON catalog_products (tenant_id, updated_at, id);
CREATE INDEX catalog_products_tenant_title ON catalog_products (tenant_id, title, id);
CREATE INDEX catalog_products_tenant_sku_order ON catalog_products (tenant_id, sku, id);
-- Foreign key: organization filters and deletions.
CREATE INDEX catalog_products_organization ON catalog_products (organization_id);

CREATE TRIGGER catalog_products_updated_at BEFORE UPDATE ON catalog_products
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

-- `catalog.products` read versions per tenant (core_tenant_read_versions):
-- every write bumps its tenant's version, so a kept product-list answer is
-- served only while nothing it showed changed.
CREATE TRIGGER catalog_products_read_version_insert AFTER INSERT ON catalog_products
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('catalog.products');
CREATE TRIGGER catalog_products_read_version_update AFTER UPDATE ON catalog_products
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('catalog.products');
CREATE TRIGGER catalog_products_read_version_delete AFTER DELETE ON catalog_products
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('catalog.products');
