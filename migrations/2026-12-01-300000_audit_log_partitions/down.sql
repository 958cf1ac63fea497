-- Back to one table each, as before the partitioning (same columns,
-- constraints, indexes, trigger, storage options and view); every row kept.
DROP VIEW access_logs;
ALTER TABLE access_reads RENAME TO access_reads_partitioned;
ALTER TABLE access_reads_partitioned DROP CONSTRAINT access_reads_pkey;
DROP INDEX access_reads_tenant_actor;
DROP INDEX access_reads_created;
CREATE TABLE access_reads (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid,
    organization_id uuid,
    actor_user_id uuid,
    resource_kind text NOT NULL,
    access_type text NOT NULL,
    fields text[] NOT NULL DEFAULT '{}',
    context_json jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    resource_ids text[] NOT NULL,
    entry_ids uuid[] NOT NULL,
    repeat_bases uuid[],
    repeat_ats timestamptz[],
    CONSTRAINT access_reads_one_entry_per_record CHECK (
        cardinality(resource_ids) > 0
        AND cardinality(resource_ids) = cardinality(entry_ids)
    ),
    CONSTRAINT access_reads_repeats_paired CHECK (
        (repeat_bases IS NULL AND repeat_ats IS NULL)
        OR (cardinality(repeat_bases) > 0
            AND cardinality(repeat_bases) = cardinality(repeat_ats))
    )
) WITH (toast_tuple_target = 8160);
INSERT INTO access_reads (id, tenant_id, organization_id, actor_user_id, resource_kind,
    access_type, fields, context_json, created_at, resource_ids, entry_ids, repeat_bases,
    repeat_ats)
SELECT id, tenant_id, organization_id, actor_user_id, resource_kind, access_type, fields,
    context_json, created_at, resource_ids, entry_ids, repeat_bases, repeat_ats
FROM access_reads_partitioned;
DROP TABLE access_reads_partitioned;
CREATE INDEX access_reads_tenant_actor ON access_reads (tenant_id, actor_user_id, created_at DESC);
CREATE INDEX access_reads_created ON access_reads (created_at);
CREATE VIEW access_logs AS
SELECT e.id, r.tenant_id, r.organization_id, r.actor_user_id, r.resource_kind,
       e.resource_id, r.access_type, r.fields, r.context_json, e.created_at,
       r.created_at AS stored_at
FROM access_reads r
CROSS JOIN LATERAL (
    SELECT first.id, first.resource_id, r.created_at
    FROM unnest(r.entry_ids, r.resource_ids) AS first (id, resource_id)
    UNION ALL
    SELECT stoa_access_entry_id(again.base, record.position - 1), record.resource_id, again.at
    FROM unnest(r.repeat_bases, r.repeat_ats) AS again (base, at)
    CROSS JOIN LATERAL unnest(r.resource_ids) WITH ORDINALITY AS record (resource_id, position)
) AS e (id, resource_id, created_at);

ALTER TABLE action_logs RENAME TO action_logs_partitioned;
ALTER TABLE action_logs_partitioned DROP CONSTRAINT action_logs_pkey;
DROP INDEX action_logs_tenant_created, action_logs_actor_created, action_logs_resource,
    action_logs_parent, action_logs_tenant_type, action_logs_tenant_kind_type,
    action_logs_tenant_field, action_logs_undo_token, action_logs_undoable;
CREATE TABLE action_logs (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid,
    organization_id uuid,
    actor_user_id uuid,
    command_id text NOT NULL,
    action_label text,
    action_type text NOT NULL DEFAULT 'system',
    resource_kind text,
    resource_id text,
    parent_resource_kind text,
    parent_resource_id text,
    execution_state text NOT NULL DEFAULT 'done',
    undo_token text,
    command_payload jsonb,
    snapshot_before jsonb,
    snapshot_after jsonb,
    changes_json jsonb,
    changed_fields text[] NOT NULL DEFAULT '{}',
    primary_changed_field text,
    context_json jsonb,
    source_key text NOT NULL DEFAULT 'api',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    other_tenant_ids uuid[] NOT NULL DEFAULT '{}',
    actor_is_super_admin boolean NOT NULL DEFAULT false,
    CONSTRAINT action_logs_action_type_check
        CHECK (action_type IN ('create', 'edit', 'delete', 'assign', 'system')),
    CONSTRAINT action_logs_execution_state_check
        CHECK (execution_state IN ('done', 'undoing', 'undone', 'failed', 'redone')),
    CONSTRAINT action_logs_source_key_check CHECK (source_key IN ('ui', 'api', 'system', 'business_rule'))
);
INSERT INTO action_logs (id, tenant_id, organization_id, actor_user_id, command_id, action_label,
    action_type, resource_kind, resource_id, parent_resource_kind, parent_resource_id,
    execution_state, undo_token, command_payload, snapshot_before, snapshot_after, changes_json,
    changed_fields, primary_changed_field, context_json, source_key, created_at, updated_at,
    other_tenant_ids, actor_is_super_admin)
SELECT id, tenant_id, organization_id, actor_user_id, command_id, action_label,
    action_type, resource_kind, resource_id, parent_resource_kind, parent_resource_id,
    execution_state, undo_token, command_payload, snapshot_before, snapshot_after, changes_json,
    changed_fields, primary_changed_field, context_json, source_key, created_at, updated_at,
    other_tenant_ids, actor_is_super_admin
FROM action_logs_partitioned;
DROP TABLE action_logs_partitioned;
CREATE INDEX action_logs_tenant_created ON action_logs (tenant_id, created_at DESC, id DESC);
CREATE INDEX action_logs_actor_created ON action_logs (actor_user_id, created_at DESC, id DESC);
CREATE INDEX action_logs_resource ON action_logs (tenant_id, resource_kind, resource_id, created_at DESC);
CREATE INDEX action_logs_parent ON action_logs (tenant_id, parent_resource_kind, parent_resource_id)
    WHERE parent_resource_id IS NOT NULL;
CREATE INDEX action_logs_tenant_type ON action_logs (tenant_id, action_type, created_at DESC);
CREATE INDEX action_logs_tenant_kind_type ON action_logs
    (tenant_id, resource_kind, action_type, created_at DESC);
CREATE INDEX action_logs_tenant_field ON action_logs (tenant_id, primary_changed_field, created_at DESC);
CREATE UNIQUE INDEX action_logs_undo_token ON action_logs (undo_token) WHERE undo_token IS NOT NULL;
CREATE INDEX action_logs_undoable ON action_logs (actor_user_id, tenant_id, created_at DESC)
    WHERE undo_token IS NOT NULL AND execution_state = 'done';
CREATE TRIGGER action_logs_updated_at BEFORE UPDATE ON action_logs
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

DROP FUNCTION stoa_log_partitions_drop_before(text, timestamptz);
DROP FUNCTION stoa_log_partitions_ensure(text, timestamptz, timestamptz);
DROP FUNCTION stoa_log_partition_ensure(text, date);
DROP TABLE audit_log_prunes;
