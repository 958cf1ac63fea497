-- Devices (mobile apps, browsers) users register to receive pushes. A device
-- is "deactivated" by a soft delete and revived when registered again.
CREATE TABLE user_devices (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    user_id uuid NOT NULL REFERENCES users (id),
    device_id text NOT NULL CHECK (length(device_id) BETWEEN 1 AND 255),
    platform text NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
    client_app_version text,
    os_version text,
    locale text,
    -- A secret: never returned by the API, never written to the action log.
    push_token text,
    push_provider text,
    push_token_updated_at timestamptz,
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);

-- One live row per (tenant, organization, user, device id); a null
-- organization counts as one value (NULLS NOT DISTINCT needs Postgres 15).
CREATE UNIQUE INDEX user_devices_live_key ON user_devices
    (tenant_id, (coalesce(organization_id, '00000000-0000-0000-0000-000000000000'::uuid)), user_id, device_id)
    WHERE deleted_at IS NULL;
-- Registration looks for the live row, else the newest deactivated one.
CREATE INDEX user_devices_user_device ON user_devices (tenant_id, user_id, device_id, deleted_at DESC);
-- A user's own list (GET /devices), sorted by last seen (the default sort).
CREATE INDEX user_devices_user_last_seen ON user_devices (tenant_id, user_id, last_seen_at DESC)
    WHERE deleted_at IS NULL;
-- Tenant-wide lists (admin), one per sort field, and the platform filter.
CREATE INDEX user_devices_tenant_last_seen ON user_devices (tenant_id, last_seen_at DESC)
    WHERE deleted_at IS NULL;
CREATE INDEX user_devices_tenant_created ON user_devices (tenant_id, created_at DESC)
    WHERE deleted_at IS NULL;
CREATE INDEX user_devices_tenant_updated ON user_devices (tenant_id, updated_at DESC)
    WHERE deleted_at IS NULL;
CREATE INDEX user_devices_tenant_platform ON user_devices (tenant_id, platform, last_seen_at DESC)
    WHERE deleted_at IS NULL;
-- Foreign keys: organization filters and user deletions.
CREATE INDEX user_devices_organization ON user_devices (organization_id);
CREATE INDEX user_devices_user ON user_devices (user_id);

CREATE TRIGGER user_devices_updated_at BEFORE UPDATE ON user_devices
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();
