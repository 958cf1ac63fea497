-- Undo and redo are authorized writes (docs/security.md). An entry records
-- every tenant it touched besides its own (a user moved between tenants), so
-- only a super admin may read, undo or redo it, and whether its actor was a
-- super admin, so tenant-wide undo never reverts a super admin's change for
-- someone who is not one.
ALTER TABLE action_logs
    ADD COLUMN other_tenant_ids uuid[] NOT NULL DEFAULT '{}',
    ADD COLUMN actor_is_super_admin boolean NOT NULL DEFAULT false;
