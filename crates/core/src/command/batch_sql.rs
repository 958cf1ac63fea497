//! Set-based recording: a bulk change, its action-log entries and its outbox
//! events in one statement, the entries built by Postgres from the changed
//! rows.
//!
//! [`record_batch`](super::record_batch) takes entries the server built: for
//! a bulk job's unit of 250 deals that is 250 `serde_json::Value` trees of
//! snapshots, diffs and events, serialized into the statement's binds and
//! parsed again by Postgres (the server's CPU per 100,000 deals was 5.6-7 s,
//! the parsing a tenth of the database's). Here the module writes the change
//! and describes each entry in SQL, from the rows before and after its
//! `UPDATE` in the same statement; this module wraps that in the inserts of
//! the action log and the outbox, so those two tables stay the bus's.
//!
//! The entries are those of [`tracked::entry`](super::tracked::entry) for a
//! resource whose view is its state (`Tracked::VIEW_IS_STATE`): undoable,
//! with the undo payload naming the snapshots. Write guards cannot see
//! entries that exist only in SQL, so [`record_set`] refuses an actor with a
//! guard that applies to the command ([`WriteGuards::applies_now`]); such work
//! goes through `record_batch`. Each module's tests check that its SQL
//! writes what the Rust entries would (snapshots, changes, events).

use diesel::sql_types::{Array, BigInt, Bool, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::outbox::{BATCH_FROM, BATCH_MAX, BATCH_NAME};
use super::{Actor, diff, pruned, source_key};
use crate::error::AppError;
use crate::prepared::Cached;

/// The first parameter number a module's SQL may use (`$12`): the ones
/// before it are this module's.
pub const FIRST_PARAM: usize = 12;

/// A module's part of a set-based recording.
pub struct SetSource<'a> {
    /// The command id of every entry (`customers.deals.bulk_update_stage`).
    pub command_id: &'static str,
    /// The entries' action label.
    pub label: &'a str,
    /// The entries' resource kind (`Tracked::KIND`).
    pub resource_kind: &'static str,
    /// How many entries the statement can record at most (one action-log id
    /// and undo token is bound for each).
    pub max_entries: usize,
    /// The whole statement: [`set_statement`] of the module's CTEs (the
    /// same text for every unit of a job, so the caller keeps it once).
    pub statement: &'a str,
}

/// The statement around `ctes`: common table expressions (without `WITH`, parameters from
/// [`FIRST_PARAM`]) that make the change and end in two named
/// `recorded` and `recorded_events`:
///
/// - `recorded`: one row per entry, `n bigint` (1 ..= [`SetSource::max_entries`],
///   distinct: the entry's order and its id's index), `tenant_id uuid`,
///   `organization_id uuid`, `resource_id text`, `snapshot_before jsonb`,
///   `snapshot_after jsonb` (the states, without `updatedAt` and without
///   [`diff::SECRET_FIELDS`]), `changes_json jsonb`
///   (`{field: {from, to}}`, as [`diff::changes`]) and
///   `changed_fields text[]` (its keys, in byte order);
/// - `recorded_events`: one row per event, `n bigint` (its entry), `k int`
///   (its order within the entry), `name text`, `payload text` (a JSON
///   object, copied into the outbox's batch text as it is: building it
///   as text costs Postgres half of `json_build_object`), and its
///   entry's `tenant_id`, `organization_id` and `resource_id` (so the
///   events need no join back to their entries).
///
/// A resource keeps its tenant: the entries name no other tenants. The
/// events' origin is the command's module, as the bus records it
/// ([`super::outbox::Origin`]).
///
/// Parameters: `$1` action-log ids, `$2` undo tokens (by `n`), `$3` actor
/// user, `$4` super admin, `$5` source, `$6` command id, `$7` label, `$8`
/// action type, `$9` resource kind, `$10` the actor's tenant and `$11`
/// organization (for entries without their own).
pub fn set_statement(ctes: &str) -> String {
    let tenant = json_uuid("tenant_id");
    let organization = json_uuid("organization_id");
    let actor = json_uuid("$3::uuid");
    format!(
        "WITH {ctes}, \
stoa_logs AS ( \
    INSERT INTO action_logs (id, tenant_id, organization_id, actor_user_id, command_id, \
        action_label, action_type, resource_kind, resource_id, parent_resource_kind, \
        parent_resource_id, undo_token, command_payload, snapshot_before, snapshot_after, \
        changes_json, changed_fields, primary_changed_field, context_json, other_tenant_ids, \
        actor_is_super_admin, source_key) \
    SELECT ($1::uuid[])[r.n::int], coalesce(r.tenant_id, $10), coalesce(r.organization_id, $11), \
        $3, $6, $7, $8, $9, r.resource_id, NULL, NULL, ($2::text[])[r.n::int], \
        jsonb_build_object('undo', jsonb_build_object('id', r.resource_id, 'states', 'snapshots')), \
        r.snapshot_before, r.snapshot_after, r.changes_json, r.changed_fields, \
        r.changed_fields[1], NULL, '{{}}'::uuid[], $4, $5 \
    FROM recorded r ORDER BY r.n \
    RETURNING 1), \
stoa_events AS ( \
    SELECT e.name, e.payload, coalesce(e.tenant_id, $10) AS tenant_id, \
        coalesce(e.organization_id, $11) AS organization_id, e.resource_id, \
        ($1::uuid[])[e.n::int] AS action_log_id, \
        row_number() OVER (ORDER BY e.n, e.k) - 1 AS i, count(*) OVER () AS total \
    FROM recorded_events e), \
stoa_event_constants AS ( \
    SELECT concat(',\"actorUserId\":', {actor}, ',\"actorSource\":', to_json($5::text), \
        ',\"commandId\":', to_json($6::text)) AS actor, to_json($9::text)::text AS kind), \
stoa_single_events AS ( \
    INSERT INTO event_outbox (name, payload, tenant_id, organization_id, actor_user_id, \
        actor_source, command_id, action_log_id, resource_kind, resource_id, origin) \
    SELECT name, payload::jsonb, tenant_id, organization_id, $3, $5, $6, action_log_id, $9, \
        resource_id, split_part($6, '.', 1) \
    FROM stoa_events WHERE total <= {BATCH_FROM} ORDER BY i \
    RETURNING 1), \
stoa_batches AS ( \
    INSERT INTO event_outbox (name, payload, tenant_id, organization_id, batch, event_count, \
        origin) \
    SELECT '{BATCH_NAME}', jsonb_build_object('events', count(*)), tenant_id, \
        CASE WHEN count(DISTINCT organization_id) = 1 AND count(organization_id) = count(*) \
            THEN (array_agg(organization_id))[1] END, \
        '[' || string_agg(concat('{{\"eventId\":\"', gen_random_uuid(), '\",\"name\":', \
            to_json(name), ',\"payload\":', payload, ',\"tenantId\":', {tenant}, \
            ',\"organizationId\":', {organization}, c.actor, ',\"actionLogId\":\"', \
            action_log_id, '\",\"resourceKind\":', c.kind, ',\"resourceId\":', \
            coalesce(to_json(resource_id)::text, 'null'), '}}'), \
            ',' ORDER BY i) || ']', \
        count(*)::int, split_part($6, '.', 1) \
    FROM stoa_events, stoa_event_constants c WHERE total > {BATCH_FROM} \
    GROUP BY tenant_id, i / {BATCH_MAX}, c.actor, c.kind ORDER BY min(i) \
    RETURNING 1) \
SELECT count(*) AS recorded FROM stoa_logs"
    )
}

/// A nullable uuid as JSON text (`"…"` or `null`).
fn json_uuid(expr: &str) -> String {
    format!("coalesce('\"' || {expr} || '\"', 'null')")
}

#[derive(diesel::QueryableByName)]
struct Counts {
    #[diesel(sql_type = BigInt)]
    recorded: i64,
}

/// Runs `source`'s statement, with the module's parameters
/// bound by `bind` after this module's: the change, its action-log entries
/// and its events in one statement, in the caller's transaction. Returns how
/// many entries it recorded.
pub async fn record_set<'q>(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    source: &SetSource<'_>,
    bind: impl FnOnce(
        diesel::query_builder::BoxedSqlQuery<'q, diesel::pg::Pg, diesel::query_builder::SqlQuery>,
    ) -> diesel::query_builder::BoxedSqlQuery<
        'q,
        diesel::pg::Pg,
        diesel::query_builder::SqlQuery,
    >,
) -> Result<u64, AppError> {
    let tenant = actor.tenant_id;
    if actor
        .guards
        .applies_now(conn, source.command_id, tenant)
        .await?
    {
        return Err(AppError::internal(format!(
            "{} cannot be recorded in SQL: a write guard applies to it",
            source.command_id
        )));
    }
    let n = source.max_entries;
    let ids: Vec<Uuid> = (0..n).map(|_| pruned::time_ordered_id()).collect();
    let tokens: Vec<String> = (0..n)
        .map(|_| pruned::time_ordered_id().to_string())
        .collect();
    let query = diesel::sql_query(source.statement)
        .into_boxed()
        .bind::<Array<SqlUuid>, _>(ids)
        .bind::<Array<Text>, _>(tokens)
        .bind::<Nullable<SqlUuid>, _>(actor.user_id)
        .bind::<Bool, _>(actor.is_super_admin())
        .bind::<Text, _>(source_key(actor))
        .bind::<Text, _>(source.command_id)
        .bind::<Text, _>(source.label.to_string())
        .bind::<Text, _>(diff::action_type(source.command_id))
        .bind::<Text, _>(source.resource_kind)
        .bind::<Nullable<SqlUuid>, _>(tenant)
        .bind::<Nullable<SqlUuid>, _>(actor.organization_id);
    let counts: Counts = Cached(bind(query)).get_result(conn).await?;
    Ok(u64::try_from(counts.recorded).unwrap_or(0))
}
