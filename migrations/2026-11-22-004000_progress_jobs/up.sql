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
