-- The job queue (stoa-jobs). Until the queue became a crate of its own,
-- these tables were created by 2026-11-22-004000 together with
-- progress_jobs; that migration now creates progress_jobs alone. A database
-- that applied the old 004000 already has every table below: each statement
-- here is written to be a no-op there (IF NOT EXISTS, OR REPLACE), except
-- the foreign key into progress_jobs, which is dropped so the queue refers to
-- no table of a module above it.

-- The work queue. A worker claims a row with FOR UPDATE SKIP LOCKED and holds
-- it until `locked_until` (the visibility timeout), extended by heartbeats; a
-- worker that dies lets the lock lapse and another worker retries the job.
CREATE TABLE IF NOT EXISTS job_queue (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    kind text NOT NULL,
    payload jsonb NOT NULL DEFAULT '{}',
    -- The record clients poll (stoa-progress's, through stoa_jobs::JobRecords):
    -- an opaque id here, no foreign key into the module above the queue.
    progress_job_id uuid,
    status text NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'running', 'done', 'dead')),
    attempts integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL DEFAULT 5,
    run_after timestamptz NOT NULL DEFAULT now(),
    locked_until timestamptz,
    locked_by text,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS job_queue_ready ON job_queue (run_after) WHERE status = 'queued';
CREATE INDEX IF NOT EXISTS job_queue_leased ON job_queue (locked_until) WHERE status = 'running';
CREATE OR REPLACE TRIGGER job_queue_updated_at BEFORE UPDATE ON job_queue
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

-- Units of work a job has finished. A unit's effects and its row commit in one
-- transaction, so a retried job skips exactly the units that are done.
CREATE TABLE IF NOT EXISTS job_units (
    job_id uuid NOT NULL REFERENCES job_queue (id) ON DELETE CASCADE,
    unit text NOT NULL,
    done_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, unit)
);

ALTER TABLE job_queue DROP CONSTRAINT IF EXISTS job_queue_progress_job_id_fkey;
