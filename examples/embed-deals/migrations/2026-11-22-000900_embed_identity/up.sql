-- The example's own identity tables (embed-deals). stoa-customers'
-- migrations reference `tenants (id)`, `organizations (id)` and
-- `users (id, tenant_id)`, which stoa-directory and stoa-auth own in stoa;
-- a program without those crates creates them itself, with a version
-- before customers' first migration (2026-11-28-110000) and after
-- stoa-core's setup (2026-11-22-000000). Any further columns are the
-- program's own: these are what this example's identity reads.
CREATE TABLE tenants (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200)
);

CREATE TABLE organizations (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200)
);
CREATE INDEX organizations_tenant ON organizations (tenant_id);

-- One organization per user; the features are the user's grants
-- (`customers.*`, `customers.deals.view`, ...), checked as stoa checks them.
CREATE TABLE users (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid NOT NULL REFERENCES organizations (id),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    features text[] NOT NULL DEFAULT '{}',
    active boolean NOT NULL DEFAULT true
);
CREATE INDEX users_tenant ON users (tenant_id);
CREATE INDEX users_organization ON users (organization_id);
