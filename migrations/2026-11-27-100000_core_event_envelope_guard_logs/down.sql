DROP TABLE IF EXISTS guard_logs;
DROP TABLE IF EXISTS event_deliveries;
DROP INDEX IF EXISTS event_outbox_organization;
DROP INDEX IF EXISTS event_outbox_tenant;
ALTER TABLE event_outbox
    DROP COLUMN IF EXISTS organization_id,
    DROP COLUMN IF EXISTS actor_user_id,
    DROP COLUMN IF EXISTS actor_source,
    DROP COLUMN IF EXISTS command_id,
    DROP COLUMN IF EXISTS action_log_id,
    DROP COLUMN IF EXISTS resource_kind,
    DROP COLUMN IF EXISTS resource_id;
