CREATE TABLE tenants (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name text NOT NULL,
    is_active boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE INDEX tenants_name ON tenants (lower(name)) WHERE deleted_at IS NULL;
CREATE TRIGGER tenants_updated_at BEFORE UPDATE ON tenants
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

-- Organizations form a tree per tenant. `ancestor_ids` is the materialised path
-- from the root down to the parent, so "X and its descendants" is
-- `id = X OR ancestor_ids @> ARRAY[X]` on a GIN index.
CREATE TABLE organizations (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    name text NOT NULL,
    slug text,
    logo_url text,
    logo_preserve_aspect_ratio boolean NOT NULL DEFAULT false,
    is_active boolean NOT NULL DEFAULT true,
    parent_id uuid REFERENCES organizations (id),
    root_id uuid NOT NULL,
    depth integer NOT NULL DEFAULT 0,
    ancestor_ids uuid[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE UNIQUE INDEX organizations_tenant_slug ON organizations (tenant_id, slug)
    WHERE deleted_at IS NULL AND slug IS NOT NULL;
CREATE INDEX organizations_slug ON organizations (slug, created_at) WHERE deleted_at IS NULL;
CREATE INDEX organizations_tenant ON organizations (tenant_id) WHERE deleted_at IS NULL;
CREATE INDEX organizations_ancestors ON organizations USING gin (ancestor_ids);
CREATE TRIGGER organizations_updated_at BEFORE UPDATE ON organizations
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();
-- Organization restrictions in ACLs expand to subtrees: a tree change is an ACL change.
CREATE TRIGGER organizations_acl_version AFTER INSERT OR UPDATE OR DELETE ON organizations
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_acl_version();
