DROP TABLE IF EXISTS job_schedules;
DROP INDEX IF EXISTS job_units_failed;
ALTER TABLE job_units
    DROP COLUMN IF EXISTS failed_items,
    DROP COLUMN IF EXISTS items;
DROP INDEX IF EXISTS job_queue_finished;
DROP INDEX IF EXISTS job_queue_schedule_active;
DROP INDEX IF EXISTS job_queue_progress;
DROP INDEX IF EXISTS job_queue_organization;
DROP INDEX IF EXISTS job_queue_tenant;
ALTER TABLE job_queue
    DROP COLUMN IF EXISTS items_failed,
    DROP COLUMN IF EXISTS schedule,
    DROP COLUMN IF EXISTS created_by_api_key_id,
    DROP COLUMN IF EXISTS created_by_user_id,
    DROP COLUMN IF EXISTS organization_id,
    DROP COLUMN IF EXISTS tenant_id;
