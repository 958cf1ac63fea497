-- What clients poll: one row per long-running operation.
CREATE TABLE progress_jobs (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    job_type text NOT NULL,
    name text NOT NULL,
    description text,
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
    progress_percent smallint NOT NULL DEFAULT 0,
    processed_count integer NOT NULL DEFAULT 0,
    total_count integer,
    eta_seconds integer,
    started_by_user_id uuid,
    started_at timestamptz,
    heartbeat_at timestamptz,
    finished_at timestamptz,
    result_summary jsonb,
    error_message text,
    meta jsonb,
    cancellable boolean NOT NULL DEFAULT false,
    cancelled_by_user_id uuid,
    cancel_requested_at timestamptz,
    parent_job_id uuid REFERENCES progress_jobs (id) ON DELETE CASCADE,
    partition_index integer,
    partition_count integer,
    tenant_id uuid NOT NULL,
    organization_id uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX progress_jobs_scope ON progress_jobs (tenant_id, organization_id, created_at DESC);
CREATE INDEX progress_jobs_active ON progress_jobs (tenant_id, status) WHERE status IN ('pending', 'running');
CREATE TRIGGER progress_jobs_updated_at BEFORE UPDATE ON progress_jobs
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

-- The work queue. A worker claims a row with FOR UPDATE SKIP LOCKED and holds
-- it until `locked_until` (the visibility timeout), extended by heartbeats; a
-- worker that dies lets the lock lapse and another worker retries the job.
CREATE TABLE job_queue (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    kind text NOT NULL,
    payload jsonb NOT NULL DEFAULT '{}',
    progress_job_id uuid REFERENCES progress_jobs (id) ON DELETE SET NULL,
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
CREATE INDEX job_queue_ready ON job_queue (run_after) WHERE status = 'queued';
CREATE INDEX job_queue_leased ON job_queue (locked_until) WHERE status = 'running';
CREATE TRIGGER job_queue_updated_at BEFORE UPDATE ON job_queue
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

-- Units of work a job has finished. A unit's effects and its row commit in one
-- transaction, so a retried job skips exactly the units that are done.
CREATE TABLE job_units (
    job_id uuid NOT NULL REFERENCES job_queue (id) ON DELETE CASCADE,
    unit text NOT NULL,
    done_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, unit)
);
