ALTER TABLE action_logs DROP COLUMN other_tenant_ids, DROP COLUMN actor_is_super_admin;
