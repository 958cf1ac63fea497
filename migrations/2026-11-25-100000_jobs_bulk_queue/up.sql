-- Bulk jobs: the scope a job runs in, per-unit outcomes, recurring jobs.

-- Who asked for a job and where: the worker runs it in the same tenant and
-- organization, and its handler can re-authorize the creator.
ALTER TABLE job_queue
    ADD COLUMN tenant_id uuid,
    ADD COLUMN organization_id uuid,
    ADD COLUMN created_by_user_id uuid,
    ADD COLUMN created_by_api_key_id uuid,
    -- The schedule that enqueued this run (recurring jobs), else NULL.
    ADD COLUMN schedule text,
    -- Items of units that ended failed (a running counter, never a COUNT(*)).
    ADD COLUMN items_failed integer NOT NULL DEFAULT 0;
CREATE INDEX job_queue_tenant ON job_queue (tenant_id) WHERE tenant_id IS NOT NULL;
CREATE INDEX job_queue_organization ON job_queue (organization_id) WHERE organization_id IS NOT NULL;
CREATE INDEX job_queue_progress ON job_queue (progress_job_id) WHERE progress_job_id IS NOT NULL;
-- At most one queued or running job per schedule.
CREATE UNIQUE INDEX job_queue_schedule_active ON job_queue (schedule)
    WHERE schedule IS NOT NULL AND status IN ('queued', 'running');
-- The pruning sweep deletes finished jobs by age.
CREATE INDEX job_queue_finished ON job_queue (updated_at) WHERE status IN ('done', 'dead');

-- A unit's durable outcome: how many items it carried, and the items that
-- failed for good (with their messages) when it did not fully succeed.
ALTER TABLE job_units
    ADD COLUMN items integer NOT NULL DEFAULT 1,
    ADD COLUMN failed_items jsonb;
CREATE INDEX job_units_failed ON job_units (job_id, done_at) WHERE failed_items IS NOT NULL;

-- Recurring jobs. Every worker process runs one UPDATE ... WHERE next_run_at
-- <= now() RETURNING per tick: the row lock lets exactly one process move
-- next_run_at on and enqueue the run.
CREATE TABLE job_schedules (
    name text PRIMARY KEY,
    kind text NOT NULL,
    payload jsonb NOT NULL DEFAULT '{}',
    period interval NOT NULL CHECK (period > interval '0'),
    next_run_at timestamptz NOT NULL DEFAULT now(),
    last_run_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER job_schedules_updated_at BEFORE UPDATE ON job_schedules
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();
