-- Account administration: search indexes for the user list and the indexes
-- the role list, role counts and super-admin filters use.

-- `search` and `name` match substrings (ILIKE '%term%'); trigram GIN indexes
-- serve them. pg_trgm ships with PostgreSQL's contrib package; where it is not
-- installed the list still works, by scanning.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE INDEX users_email_trgm ON users USING gin (email gin_trgm_ops)
            WHERE deleted_at IS NULL;
        CREATE INDEX users_name_trgm ON users USING gin (name gin_trgm_ops)
            WHERE deleted_at IS NULL;
    END IF;
END
$$;

-- The default order of the user list (tenant, then e-mail) is the unique
-- index users_tenant_email; super admins list every tenant by e-mail.
CREATE INDEX users_email_order ON users (email, id) WHERE deleted_at IS NULL;
CREATE INDEX users_tenant ON users (tenant_id) WHERE deleted_at IS NULL;
CREATE INDEX roles_tenant ON roles (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX role_acls_tenant ON role_acls (tenant_id);
CREATE INDEX role_acls_super_admin ON role_acls (role_id) WHERE is_super_admin;
CREATE INDEX user_acls_tenant ON user_acls (tenant_id);
CREATE INDEX user_acls_super_admin ON user_acls (user_id) WHERE is_super_admin;
