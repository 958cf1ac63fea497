-- Default grants given to the built-in roles (superadmin, admin, employee) of
-- each tenant, so `stoa grants sync` (run by `stoa migrate`) adds a module's new
-- default grants to existing tenants once, and never re-adds one that an
-- administrator revoked afterwards.
CREATE TABLE role_grant_ledger (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    role_name text NOT NULL,
    feature text NOT NULL,
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, role_name, feature)
);
