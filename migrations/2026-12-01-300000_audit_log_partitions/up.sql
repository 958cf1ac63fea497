-- A bounded audit trail (issue 33): the action log (`action_logs`) and the
-- access log (`access_reads`, read through the view `access_logs`) are
-- partitioned by month of `created_at`. Retention drops whole months
-- (`DROP TABLE` of a partition: no row-by-row delete, no bloat, no vacuum
-- debt), and a recurring job (stoa-audit-logs, `audit_logs.partitions`)
-- creates the current and the next month's partitions ahead of time. Each
-- table also has a DEFAULT partition, so an insert never fails for want of
-- its month; the next run of the job moves such rows into their month.
--
-- Partitions are named `<table>_pYYYY_MM` (months in UTC) and
-- `<table>_default`; they are ordinary tables with `relispartition` set.
-- Keys hold the partition key: the primary keys are (id, created_at) and
-- the undo-token index is (undo_token, created_at); look-ups by id or token
-- alone probe each partition's index.

-- How far back each table has been pruned: every entry created before
-- `pruned_before` is gone (undo of such an entry answers `entry_pruned`).
CREATE TABLE audit_log_prunes (
    table_name text PRIMARY KEY,
    pruned_before timestamptz NOT NULL,
    pruned_at timestamptz NOT NULL DEFAULT now()
);

-- Creates `parent`'s partition for the UTC month of `month` unless it exists;
-- rows of that month waiting in the DEFAULT partition move into it. Returns
-- whether it created one. SECURITY DEFINER: the server role that runs the
-- job does not own the tables.
CREATE FUNCTION stoa_log_partition_ensure(parent text, month date) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    first date := date_trunc('month', month)::date;
    start_at timestamptz := first::timestamp AT TIME ZONE 'UTC';
    end_at timestamptz := (first + interval '1 month')::timestamp AT TIME ZONE 'UTC';
    part text := format('%s_p%s', parent, to_char(first, 'YYYY_MM'));
    fallback text := parent || '_default';
    options text[];
BEGIN
    IF parent NOT IN ('action_logs', 'access_reads') THEN
        RAISE EXCEPTION 'not a partitioned log: %', parent;
    END IF;
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    -- Two workers (or the migration and a worker) never race on one table.
    PERFORM pg_advisory_xact_lock(hashtext('stoa_log_partitions:' || parent));
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                   part, parent);
    -- The storage options of the DEFAULT partition (`access_reads` keeps
    -- 8 KB rows inline: toast_tuple_target, migration core_access_reads_inline).
    SELECT c.reloptions INTO options FROM pg_class c WHERE c.oid = to_regclass(fallback);
    IF options IS NOT NULL THEN
        EXECUTE format('ALTER TABLE %I SET (%s)', part, array_to_string(options, ', '));
    END IF;
    IF to_regclass(fallback) IS NOT NULL THEN
        EXECUTE format('WITH moved AS (DELETE FROM %I WHERE created_at >= $1 AND created_at < $2 '
                       'RETURNING *) INSERT INTO %I SELECT * FROM moved', fallback, part)
            USING start_at, end_at;
    END IF;
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                   parent, part, start_at, end_at);
    RETURN true;
END
$$;

-- Creates `parent`'s partitions for every UTC month from `from_at` to
-- `to_at` (both included); returns how many it created.
CREATE FUNCTION stoa_log_partitions_ensure(parent text, from_at timestamptz, to_at timestamptz)
RETURNS integer
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT count(*) FILTER (WHERE stoa_log_partition_ensure(parent, m::date))::integer
    FROM generate_series(date_trunc('month', from_at AT TIME ZONE 'UTC'),
                         date_trunc('month', to_at AT TIME ZONE 'UTC'),
                         interval '1 month') AS m
$$;

-- Drops `parent`'s monthly partitions that end at or before the first UTC
-- month boundary at or before `cutoff` (the horizon), deletes the rows
-- older than the horizon left in its DEFAULT partition, and records the
-- horizon in `audit_log_prunes`. Returns the dropped partitions' names.
CREATE FUNCTION stoa_log_partitions_drop_before(parent text, cutoff timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    horizon timestamptz := date_trunc('month', cutoff AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    part record;
BEGIN
    IF parent NOT IN ('action_logs', 'access_reads') THEN
        RAISE EXCEPTION 'not a partitioned log: %', parent;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('stoa_log_partitions:' || parent));
    FOR part IN
        SELECT c.relname,
               (to_date(right(c.relname, 7), 'YYYY_MM') + interval '1 month')::timestamp
                   AT TIME ZONE 'UTC' AS end_at
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = parent::regclass
          AND c.relname ~ ('^' || parent || '_p[0-9]{4}_[0-9]{2}$')
        ORDER BY c.relname
    LOOP
        EXIT WHEN part.end_at > horizon;
        EXECUTE format('DROP TABLE %I', part.relname);
        RETURN NEXT part.relname;
    END LOOP;
    IF to_regclass(parent || '_default') IS NOT NULL THEN
        EXECUTE format('DELETE FROM %I WHERE created_at < $1', parent || '_default')
            USING horizon;
    END IF;
    INSERT INTO audit_log_prunes (table_name, pruned_before)
    VALUES (parent, horizon)
    ON CONFLICT (table_name) DO UPDATE
        SET pruned_before = greatest(audit_log_prunes.pruned_before, excluded.pruned_before),
            pruned_at = now();
END
$$;

-- The action log, partitioned.
ALTER TABLE action_logs RENAME TO action_logs_unpartitioned;
CREATE TABLE action_logs (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
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
) PARTITION BY RANGE (created_at);
CREATE TABLE action_logs_default PARTITION OF action_logs DEFAULT;
SELECT stoa_log_partitions_ensure('action_logs',
    least(now(), (SELECT min(created_at) FROM action_logs_unpartitioned)),
    greatest(now(), (SELECT max(created_at) FROM action_logs_unpartitioned)) + interval '1 month');
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
FROM action_logs_unpartitioned;
DROP TABLE action_logs_unpartitioned;
ALTER TABLE action_logs ADD CONSTRAINT action_logs_pkey PRIMARY KEY (id, created_at);
CREATE INDEX action_logs_tenant_created ON action_logs (tenant_id, created_at DESC, id DESC);
CREATE INDEX action_logs_actor_created ON action_logs (actor_user_id, created_at DESC, id DESC);
CREATE INDEX action_logs_resource ON action_logs (tenant_id, resource_kind, resource_id, created_at DESC);
CREATE INDEX action_logs_parent ON action_logs (tenant_id, parent_resource_kind, parent_resource_id)
    WHERE parent_resource_id IS NOT NULL;
CREATE INDEX action_logs_tenant_type ON action_logs (tenant_id, action_type, created_at DESC);
CREATE INDEX action_logs_tenant_kind_type ON action_logs
    (tenant_id, resource_kind, action_type, created_at DESC);
CREATE INDEX action_logs_tenant_field ON action_logs (tenant_id, primary_changed_field, created_at DESC);
-- Tokens are random (time-ordered UUIDs since this migration): unique in
-- practice; the index must hold the partition key to be unique at all.
CREATE UNIQUE INDEX action_logs_undo_token ON action_logs (undo_token, created_at)
    WHERE undo_token IS NOT NULL;
CREATE INDEX action_logs_undoable ON action_logs (actor_user_id, tenant_id, created_at DESC)
    WHERE undo_token IS NOT NULL AND execution_state = 'done';
CREATE TRIGGER action_logs_updated_at BEFORE UPDATE ON action_logs
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

-- The access log, partitioned (its view is rebuilt unchanged).
DROP VIEW access_logs;
ALTER TABLE access_reads RENAME TO access_reads_unpartitioned;
CREATE TABLE access_reads (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
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
) PARTITION BY RANGE (created_at);
CREATE TABLE access_reads_default PARTITION OF access_reads DEFAULT
    WITH (toast_tuple_target = 8160);
SELECT stoa_log_partitions_ensure('access_reads',
    least(now(), (SELECT min(created_at) FROM access_reads_unpartitioned)),
    greatest(now(), (SELECT max(created_at) FROM access_reads_unpartitioned)) + interval '1 month');
INSERT INTO access_reads (id, tenant_id, organization_id, actor_user_id, resource_kind,
    access_type, fields, context_json, created_at, resource_ids, entry_ids, repeat_bases,
    repeat_ats)
SELECT id, tenant_id, organization_id, actor_user_id, resource_kind, access_type, fields,
    context_json, created_at, resource_ids, entry_ids, repeat_bases, repeat_ats
FROM access_reads_unpartitioned;
DROP TABLE access_reads_unpartitioned;
ALTER TABLE access_reads ADD CONSTRAINT access_reads_pkey PRIMARY KEY (id, created_at);
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
