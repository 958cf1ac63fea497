-- One envelope for every domain event: who did what to which resource,
-- filled by the command bus from the action-log entry (issue 26).
ALTER TABLE event_outbox
    ADD COLUMN organization_id uuid,
    ADD COLUMN actor_user_id uuid,
    ADD COLUMN actor_source text,
    ADD COLUMN command_id text,
    ADD COLUMN action_log_id uuid,
    ADD COLUMN resource_kind text,
    ADD COLUMN resource_id text;
CREATE INDEX event_outbox_tenant ON event_outbox (tenant_id);
CREATE INDEX event_outbox_organization ON event_outbox (organization_id);

-- Each subscriber's delivery state of one event: a subscriber that failed is
-- retried alone; the others, once delivered, never see the event again.
CREATE TABLE event_deliveries (
    outbox_id bigint NOT NULL REFERENCES event_outbox (id) ON DELETE CASCADE,
    subscriber text NOT NULL,
    status text NOT NULL CHECK (status IN ('delivered', 'failed', 'dead')),
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (outbox_id, subscriber)
);

-- What write guards log about their decisions; a refusal's entries are
-- written on a connection of their own, so they survive the rollback of the
-- write they refused.
CREATE TABLE guard_logs (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid,
    organization_id uuid,
    actor_user_id uuid,
    guard text NOT NULL,
    command_id text NOT NULL,
    phase text NOT NULL,
    resource_kind text,
    resource_id text,
    outcome text NOT NULL CHECK (outcome IN ('allowed', 'refused')),
    message text NOT NULL,
    data jsonb,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX guard_logs_tenant ON guard_logs (tenant_id, created_at);
CREATE INDEX guard_logs_organization ON guard_logs (organization_id);
