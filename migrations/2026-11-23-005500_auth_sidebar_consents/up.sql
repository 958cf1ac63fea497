-- Sidebar customisation, sidebar variants and user consents (stoa-auth).
--
-- Preferences are kept per locale: a user's preference is keyed by
-- (user, tenant, organization, locale), a role's by (role, tenant, locale).
-- Tenant and organization may be NULL (a super admin working in no particular
-- organization), so the unique keys compare them with COALESCE to the nil uuid.

CREATE TABLE user_sidebar_preferences (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tenant_id uuid REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    locale text NOT NULL,
    settings jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX user_sidebar_preferences_key ON user_sidebar_preferences (
    user_id,
    COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid),
    COALESCE(organization_id, '00000000-0000-0000-0000-000000000000'::uuid),
    locale
);
CREATE INDEX user_sidebar_preferences_tenant ON user_sidebar_preferences (tenant_id);
CREATE INDEX user_sidebar_preferences_organization ON user_sidebar_preferences (organization_id);
CREATE TRIGGER user_sidebar_preferences_updated_at BEFORE UPDATE ON user_sidebar_preferences
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

CREATE TABLE role_sidebar_preferences (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    role_id uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    locale text NOT NULL,
    settings jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX role_sidebar_preferences_key ON role_sidebar_preferences (role_id, tenant_id, locale);
CREATE INDEX role_sidebar_preferences_tenant ON role_sidebar_preferences (tenant_id, locale);
CREATE TRIGGER role_sidebar_preferences_updated_at BEFORE UPDATE ON role_sidebar_preferences
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

-- Named sidebar setups a user can switch between; soft-deleted. Names are
-- unique (case-insensitively) among a user's live variants of one scope.
CREATE TABLE sidebar_variants (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tenant_id uuid REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    locale text NOT NULL,
    name text NOT NULL,
    settings jsonb NOT NULL DEFAULT '{}',
    is_active boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE UNIQUE INDEX sidebar_variants_name ON sidebar_variants (
    user_id,
    COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid),
    COALESCE(organization_id, '00000000-0000-0000-0000-000000000000'::uuid),
    locale,
    lower(name)
) WHERE deleted_at IS NULL;
CREATE INDEX sidebar_variants_user ON sidebar_variants (user_id, locale, created_at);
CREATE INDEX sidebar_variants_tenant ON sidebar_variants (tenant_id);
CREATE INDEX sidebar_variants_organization ON sidebar_variants (organization_id);
CREATE TRIGGER sidebar_variants_updated_at BEFORE UPDATE ON sidebar_variants
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

-- One record per (user, tenant, consent type): granted or withdrawn, with an
-- HMAC over its meaningful columns so a change made behind the API's back shows.
CREATE TABLE user_consents (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tenant_id uuid REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    consent_type text NOT NULL,
    is_granted boolean NOT NULL,
    granted_at timestamptz,
    withdrawn_at timestamptz,
    source text,
    ip_address text,
    integrity_hash text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE UNIQUE INDEX user_consents_key ON user_consents (
    user_id,
    COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid),
    consent_type
) WHERE deleted_at IS NULL;
CREATE INDEX user_consents_user ON user_consents (user_id, created_at);
CREATE INDEX user_consents_tenant ON user_consents (tenant_id);
CREATE INDEX user_consents_organization ON user_consents (organization_id);
CREATE TRIGGER user_consents_updated_at BEFORE UPDATE ON user_consents
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();
