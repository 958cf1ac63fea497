//! The bulk jobs' change in one statement with its records
//! (`stoa_core::command::record_set`): the deals' `UPDATE`, and the
//! action-log entries and events of each changed deal, built by Postgres
//! from the rows before and after it, exactly as `deal_entry` builds them
//! (tests/api/bulk.rs compares the two). Used when no write guard applies
//! to the job's command; otherwise the job records in Rust (`record_batch`).

use std::sync::OnceLock;

use diesel::sql_types::{Array, Nullable, Text, Uuid as SqlUuid};
use diesel_async::AsyncPgConnection;
use stoa_core::AppError;
use stoa_core::command::{Actor, FIRST_PARAM, SetSource, record_set, set_statement};
use uuid::Uuid;

use crate::commands::deals::{
    BULK_OWNER, BULK_STAGE, DEAL_KIND, LOST_EVENT, STAGE_CHANGED_EVENT, UPDATED_EVENT, WON_EVENT,
};

/// A timestamp as `DealState`'s serde form (`stoa_core::serde_util::timestamp`:
/// UTC, three fraction digits, `Z`).
fn rfc3339(column: &str) -> String {
    stoa_core::serde_util::timestamp::sql(column)
}

/// An amount as `Money`'s serde form (a decimal string without trailing zeros).
fn money(column: &str) -> String {
    format!("trim_scale({column})::text")
}

/// `DealState`'s serde form of the row `a`, as `jsonb`.
fn state(a: &str) -> String {
    format!(
        "jsonb_build_object('id', {a}.id, 'tenantId', {a}.tenant_id, \
         'organizationId', {a}.organization_id, 'title', {a}.title, \
         'description', {a}.description, 'status', {a}.status, \
         'pipelineStage', {a}.pipeline_stage, 'pipelineId', {a}.pipeline_id, \
         'pipelineStageId', {a}.pipeline_stage_id, 'valueAmount', {value}, \
         'valueCurrency', {a}.value_currency, 'probability', {a}.probability, \
         'expectedCloseAt', {close}, 'ownerUserId', {a}.owner_user_id, 'source', {a}.source, \
         'closureOutcome', {a}.closure_outcome, 'lossNotes', {a}.loss_notes, \
         'createdAt', {created})",
        value = money(&format!("{a}.value_amount")),
        close = rfc3339(&format!("{a}.expected_close_at")),
        created = rfc3339(&format!("{a}.created_at")),
    )
}

/// A nullable column as JSON text: `"…"` (for values that need no
/// escaping: uuids, amounts, timestamps) or `null`.
fn quoted(expr: &str) -> String {
    format!("coalesce('\"' || {expr} || '\"', 'null')")
}

/// A nullable text column as JSON text (escaped by `to_json`).
fn text(expr: &str) -> String {
    format!("coalesce(to_json({expr})::text, 'null')")
}

/// The events' payload of the row `a` (`commands::deals::payload`) as JSON
/// text, with `extra` (more `concat` arguments) appended.
fn payload(a: &str, extra: &str) -> String {
    format!(
        "concat('{{\"id\":\"', {a}.id, '\",\"tenantId\":\"', {a}.tenant_id, \
         '\",\"organizationId\":\"', {a}.organization_id, '\",\"status\":', \
         to_json({a}.status), ',\"pipelineId\":', {pipeline}, ',\"pipelineStageId\":', {stage}, \
         ',\"ownerUserId\":', {owner}, ',\"valueAmount\":', {value}, \
         ',\"valueCurrency\":', {currency}{extra}, '}}')",
        pipeline = quoted(&format!("{a}.pipeline_id")),
        stage = quoted(&format!("{a}.pipeline_stage_id")),
        owner = quoted(&format!("{a}.owner_user_id")),
        value = quoted(&money(&format!("{a}.value_amount"))),
        currency = text(&format!("{a}.value_currency")),
    )
}

/// The CTEs of one bulk change: `set` is the `UPDATE`'s assignments, and
/// `fields` the state's fields it may change (key and column), the only ones
/// that can differ between `b` (before) and `a` (after): the state after is
/// the state before with those fields replaced (`jsonb ||`, a third of
/// building it again).
fn ctes(set: &str, fields: &[(&str, &str)]) -> String {
    let mut fields = fields.to_vec();
    // `changed_fields` in byte order, as the keys of `diff::changes`.
    fields.sort_by(|x, y| x.0.cmp(y.0));
    let changes = fields
        .iter()
        .map(|(key, col)| {
            format!(
                "(CASE WHEN b.{col} IS DISTINCT FROM a.{col} THEN jsonb_build_object('{key}', \
                 jsonb_build_object('from', b.{col}, 'to', a.{col})) ELSE '{{}}'::jsonb END)"
            )
        })
        .collect::<Vec<_>>()
        .join(" || ");
    let changed = fields
        .iter()
        .map(|(key, col)| format!("CASE WHEN b.{col} IS DISTINCT FROM a.{col} THEN '{key}' END"))
        .collect::<Vec<_>>()
        .join(", ");
    let new_values = fields
        .iter()
        .map(|(key, col)| format!("'{key}', a.{col}"))
        .collect::<Vec<_>>()
        .join(", ");
    let ids = FIRST_PARAM;
    format!(
        "deal_ids AS (SELECT i.id, i.n FROM unnest(${ids}::uuid[]) WITH ORDINALITY AS i(id, n)), \
deals_before AS (SELECT i.n, d.* FROM deal_ids i JOIN customer_deals d ON d.id = i.id), \
deals_after AS ( \
    UPDATE customer_deals d SET {set}, updated_at = now() \
    WHERE d.id = ANY(${ids}::uuid[]) RETURNING d.*), \
deal_pairs AS ( \
    SELECT b.n, a.tenant_id, a.organization_id, a.id::text AS resource_id, \
        {before} AS snapshot_before, jsonb_build_object({new_values}) AS replaced, \
        {changes} AS changes_json, \
        array_remove(ARRAY[{changed}]::text[], NULL) AS changed_fields, \
        {updated} AS updated_payload, \
        CASE WHEN b.pipeline_stage_id IS DISTINCT FROM a.pipeline_stage_id THEN {moved} END \
            AS stage_payload, \
        CASE WHEN b.status IS DISTINCT FROM a.status AND a.status IN ('won', 'lost') \
            THEN a.status END AS closed \
    FROM deals_before b JOIN deals_after a ON a.id = b.id), \
recorded AS ( \
    SELECT n, tenant_id, organization_id, resource_id, snapshot_before, \
        snapshot_before || replaced AS snapshot_after, changes_json, changed_fields \
    FROM deal_pairs), \
recorded_events AS ( \
    SELECT p.n, e.k, e.name, e.payload, p.tenant_id, p.organization_id, p.resource_id \
    FROM deal_pairs p CROSS JOIN LATERAL (VALUES \
        (1, '{UPDATED_EVENT}', p.updated_payload), \
        (2, '{STAGE_CHANGED_EVENT}', p.stage_payload), \
        (3, CASE p.closed WHEN 'won' THEN '{WON_EVENT}' ELSE '{LOST_EVENT}' END, \
            CASE WHEN p.closed IS NOT NULL THEN p.updated_payload END) \
    ) AS e(k, name, payload) WHERE e.payload IS NOT NULL)",
        before = state("b"),
        updated = payload("a", ""),
        moved = payload(
            "a",
            &format!(
                ", ',\"fromStageId\":', {}, ',\"toStageId\":', {}",
                quoted("b.pipeline_stage_id"),
                quoted("a.pipeline_stage_id")
            )
        ),
    )
}

/// What a bulk job writes.
pub enum BulkSet<'a> {
    /// The owner (`None` clears it).
    Owner(Option<Uuid>),
    /// The stage, its pipeline and its label.
    Stage {
        stage: Uuid,
        pipeline: Uuid,
        label: &'a str,
    },
}

/// The whole statement of `set`'s kind (the same text for every unit:
/// values, labels included, are bound).
fn statement_of(set: &BulkSet<'_>) -> &'static str {
    static OWNER: OnceLock<String> = OnceLock::new();
    static STAGE: OnceLock<String> = OnceLock::new();
    let p = FIRST_PARAM;
    match set {
        BulkSet::Owner(_) => OWNER.get_or_init(|| {
            set_statement(&ctes(
                &format!("owner_user_id = ${}::uuid", p + 1),
                &[("ownerUserId", "owner_user_id")],
            ))
        }),
        BulkSet::Stage { .. } => STAGE.get_or_init(|| {
            set_statement(&ctes(
                &format!(
                    "pipeline_stage_id = ${}::uuid, pipeline_id = ${}::uuid, pipeline_stage = ${}::text",
                    p + 1,
                    p + 2,
                    p + 3
                ),
                &[
                    ("pipelineStageId", "pipeline_stage_id"),
                    ("pipelineId", "pipeline_id"),
                    ("pipelineStage", "pipeline_stage"),
                ],
            ))
        }),
    }
}

/// Changes `ids` (locked, checked and all different from `set`) and records
/// one entry and its events per deal, as `actor`, in one statement. Returns
/// how many deals it changed.
pub async fn write_and_record(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    label: &str,
    ids: Vec<Uuid>,
    set: BulkSet<'_>,
) -> Result<u64, AppError> {
    if ids.is_empty() {
        return Ok(0);
    }
    let src = SetSource {
        command_id: match set {
            BulkSet::Owner(_) => BULK_OWNER,
            BulkSet::Stage { .. } => BULK_STAGE,
        },
        label,
        resource_kind: DEAL_KIND,
        max_entries: ids.len(),
        statement: statement_of(&set),
    };
    let owned = match set {
        BulkSet::Owner(owner) => Owned::Owner(owner),
        BulkSet::Stage {
            stage,
            pipeline,
            label,
        } => Owned::Stage(stage, pipeline, label.to_string()),
    };
    record_set(conn, actor, &src, move |q| {
        let q = q.bind::<Array<SqlUuid>, _>(ids);
        match owned {
            Owned::Owner(owner) => q.bind::<Nullable<SqlUuid>, _>(owner),
            Owned::Stage(stage, pipeline, label) => q
                .bind::<SqlUuid, _>(stage)
                .bind::<SqlUuid, _>(pipeline)
                .bind::<Text, _>(label),
        }
    })
    .await
}

/// [`BulkSet`]'s values, owned by the statement's binds.
enum Owned {
    Owner(Option<Uuid>),
    Stage(Uuid, Uuid, String),
}
