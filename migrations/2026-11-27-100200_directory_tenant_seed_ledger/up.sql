-- Module seeders (`stoa_acl::TenantSeeder`) that have run for each tenant, so
-- `stoa seed sync` (run by `stoa migrate`) gives tenants created before a
-- module its seed data once, and never again after an administrator deleted
-- it. Provisioning records every seeder it ran.
CREATE TABLE tenant_seed_ledger (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    seeder_id text NOT NULL,
    seeded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, seeder_id)
);
