-- Users belong to one tenant and one home organization. E-mails are stored
-- trimmed and lower-cased; unique per tenant among live users.
CREATE TABLE users (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    email text NOT NULL,
    name text,
    password_hash text,
    is_confirmed boolean NOT NULL DEFAULT true,
    is_active boolean NOT NULL DEFAULT true,
    last_login_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE UNIQUE INDEX users_tenant_email ON users (tenant_id, email) WHERE deleted_at IS NULL;
CREATE INDEX users_email ON users (email) WHERE deleted_at IS NULL;
CREATE INDEX users_organization ON users (organization_id) WHERE deleted_at IS NULL;
CREATE TRIGGER users_updated_at BEFORE UPDATE ON users
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

CREATE TABLE roles (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE UNIQUE INDEX roles_tenant_name ON roles (tenant_id, lower(name)) WHERE deleted_at IS NULL;
CREATE TRIGGER roles_updated_at BEFORE UPDATE ON roles
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

CREATE TABLE user_roles (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX user_roles_pair ON user_roles (user_id, role_id);
CREATE INDEX user_roles_role ON user_roles (role_id);

-- Feature grants of a role within a tenant. `organizations` NULL = every organization.
CREATE TABLE role_acls (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    role_id uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    features text[] NOT NULL DEFAULT '{}',
    is_super_admin boolean NOT NULL DEFAULT false,
    organizations uuid[],
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX role_acls_role_tenant ON role_acls (role_id, tenant_id);
CREATE TRIGGER role_acls_updated_at BEFORE UPDATE ON role_acls
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

-- A per-user override: when present for (user, tenant) it replaces the role ACLs.
CREATE TABLE user_acls (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    features text[] NOT NULL DEFAULT '{}',
    is_super_admin boolean NOT NULL DEFAULT false,
    organizations uuid[],
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX user_acls_user_tenant ON user_acls (user_id, tenant_id);
CREATE TRIGGER user_acls_updated_at BEFORE UPDATE ON user_acls
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

CREATE TRIGGER roles_acl_version AFTER INSERT OR UPDATE OR DELETE ON roles
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_acl_version();
CREATE TRIGGER user_roles_acl_version AFTER INSERT OR UPDATE OR DELETE ON user_roles
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_acl_version();
CREATE TRIGGER role_acls_acl_version AFTER INSERT OR UPDATE OR DELETE ON role_acls
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_acl_version();
CREATE TRIGGER user_acls_acl_version AFTER INSERT OR UPDATE OR DELETE ON user_acls
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_acl_version();

-- A login session. The refresh token is 32 random bytes, stored only as its
-- SHA-256; rotation keeps the previous hash to detect reuse of a stolen token.
CREATE TABLE sessions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash text NOT NULL,
    previous_token_hash text,
    remember boolean NOT NULL DEFAULT false,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz
);
CREATE UNIQUE INDEX sessions_token_hash ON sessions (token_hash);
CREATE INDEX sessions_previous_token_hash ON sessions (previous_token_hash)
    WHERE previous_token_hash IS NOT NULL;
CREATE INDEX sessions_user ON sessions (user_id);

-- Password reset and invitation (first password) tokens, stored hashed.
CREATE TABLE password_resets (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash text NOT NULL,
    kind text NOT NULL DEFAULT 'reset' CHECK (kind IN ('reset', 'invite')),
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX password_resets_token_hash ON password_resets (token_hash);
CREATE INDEX password_resets_user ON password_resets (user_id);
