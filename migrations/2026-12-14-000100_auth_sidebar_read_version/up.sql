-- The admin navigation is a kept answer (issue 52): what it is computed from
-- beyond the caller's ACL (acl_version: roles, assignments, ACLs and
-- organizations, their branding included) is the role and user sidebar
-- preferences, whose writes now bump `preferences.sidebar` per tenant (a
-- super admin's own preferences without a tenant bump it for every tenant).
-- Named `auth_` as the migration that created the tables (stoa-preferences
-- owns them since the split from stoa-auth).
SELECT stoa_read_version_triggers('role_sidebar_preferences', 'preferences.sidebar');
SELECT stoa_read_version_triggers('user_sidebar_preferences', 'preferences.sidebar');
