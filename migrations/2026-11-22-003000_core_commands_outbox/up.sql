-- The action log: one row per executed command (written by the command bus in
-- the same transaction as the change), plus trace rows for undo.
CREATE TABLE action_logs (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid,
    organization_id uuid,
    actor_user_id uuid,
    command_id text NOT NULL,
    action_label text,
    action_type text NOT NULL DEFAULT 'system'
        CHECK (action_type IN ('create', 'edit', 'delete', 'assign', 'system')),
    resource_kind text,
    resource_id text,
    parent_resource_kind text,
    parent_resource_id text,
    execution_state text NOT NULL DEFAULT 'done'
        CHECK (execution_state IN ('done', 'undoing', 'undone', 'failed', 'redone')),
    undo_token text,
    command_payload jsonb,
    snapshot_before jsonb,
    snapshot_after jsonb,
    changes_json jsonb,
    changed_fields text[] NOT NULL DEFAULT '{}',
    primary_changed_field text,
    context_json jsonb,
    source_key text NOT NULL DEFAULT 'api' CHECK (source_key IN ('ui', 'api', 'system')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX action_logs_tenant_created ON action_logs (tenant_id, created_at DESC, id DESC);
CREATE INDEX action_logs_actor_created ON action_logs (actor_user_id, created_at DESC, id DESC);
CREATE INDEX action_logs_resource ON action_logs (tenant_id, resource_kind, resource_id, created_at DESC);
CREATE INDEX action_logs_parent ON action_logs (tenant_id, parent_resource_kind, parent_resource_id)
    WHERE parent_resource_id IS NOT NULL;
CREATE INDEX action_logs_tenant_type ON action_logs (tenant_id, action_type, created_at DESC);
-- Resource kind + action type (the common two-filter list) and its count.
CREATE INDEX action_logs_tenant_kind_type ON action_logs
    (tenant_id, resource_kind, action_type, created_at DESC);
CREATE INDEX action_logs_tenant_field ON action_logs (tenant_id, primary_changed_field, created_at DESC);
CREATE UNIQUE INDEX action_logs_undo_token ON action_logs (undo_token) WHERE undo_token IS NOT NULL;
CREATE INDEX action_logs_undoable ON action_logs (actor_user_id, tenant_id, created_at DESC)
    WHERE undo_token IS NOT NULL AND execution_state = 'done';
CREATE TRIGGER action_logs_updated_at BEFORE UPDATE ON action_logs
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

-- Who read what (sensitive reads), written by modules' list and detail reads.
CREATE TABLE access_logs (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid,
    organization_id uuid,
    actor_user_id uuid,
    resource_kind text NOT NULL,
    resource_id text NOT NULL,
    access_type text NOT NULL,
    fields text[] NOT NULL DEFAULT '{}',
    context_json jsonb,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX access_logs_tenant_actor ON access_logs (tenant_id, actor_user_id, created_at DESC);
CREATE INDEX access_logs_created ON access_logs (created_at);

-- Domain events, written in the transaction of the change and delivered after
-- commit to in-process subscribers (at least once).
CREATE TABLE event_outbox (
    id bigserial PRIMARY KEY,
    event_id uuid NOT NULL DEFAULT gen_random_uuid(),
    name text NOT NULL,
    payload jsonb NOT NULL,
    tenant_id uuid,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz
);
CREATE INDEX event_outbox_pending ON event_outbox (next_attempt_at, id) WHERE status = 'pending';
