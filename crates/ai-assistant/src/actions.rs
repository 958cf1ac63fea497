//! Pending actions: the one approval gate every mutation tool goes
//! through, whether the model called it in chat or a client called
//! `POST /ai_assistant/tools/execute`. A proposal stores the input, the
//! record's version and a field diff; a person confirms (the tool then runs
//! as the confirming user, through the owning module's service: command
//! bus, audit, undo, write guards) or cancels; the recurring job expires
//! what nobody resolved.
//!
//! States: `pending → confirmed | failed | cancelled | expired`. A confirm
//! is one transaction (see [`confirm`]): the row lock, the tool's write and
//! the outcome commit together, so two confirms never both run the tool
//! and no action waits in `executing`. The reference's `executing` (the
//! tool running after the claim committed) exists only in rows an older
//! stoa left behind when it died mid-confirm; the expiry job fails those
//! ([`STALE_EXECUTING`]).

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use stoa_acl::{AiTool, AuthContext, ToolCall, ToolKind};
use stoa_core::AppError;
use stoa_core::command::{Actor, LogEntry, record_batch};
use stoa_core::db::Db;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::agents::{AgentDef, MutationPolicy};
use crate::error::AiError;
use crate::policy;
use crate::schema::ai_pending_actions as pa;
use crate::state::AiState;
use crate::validate;

/// A stored pending action.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = pa)]
pub struct ActionRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub agent_id: String,
    pub tool_name: String,
    pub conversation_id: Option<String>,
    pub target_entity_type: Option<String>,
    pub target_record_id: Option<String>,
    pub normalized_input: Value,
    pub field_diff: Value,
    pub record_version: Option<String>,
    pub idempotency_key: String,
    pub created_by_user_id: Option<Uuid>,
    pub status: String,
    pub execution_result: Option<Value>,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    pub resolved_at: Option<OffsetDateTime>,
    pub resolved_by_user_id: Option<Uuid>,
}

/// A pending action as clients see it (no input, creator, key or scope).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingAction {
    pub id: Uuid,
    pub agent_id: String,
    pub tool_name: String,
    pub target_entity_type: Option<String>,
    pub target_record_id: Option<String>,
    #[schema(value_type = Vec<Object>)]
    pub field_diff: Value,
    pub record_version: Option<String>,
    // `executing` only on a row an older stoa left mid-confirm (see
    // `STALE_EXECUTING`).
    /// `pending`, `confirmed`, `failed`, `cancelled` or `expired`; rarely
    /// `executing`, for an action interrupted while it ran (it becomes
    /// `failed` with the code `interrupted` within 15 minutes).
    pub status: String,
    #[schema(value_type = Option<Object>)]
    pub execution_result: Option<Value>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub resolved_at: Option<OffsetDateTime>,
    pub resolved_by_user_id: Option<Uuid>,
}

impl From<ActionRow> for PendingAction {
    fn from(r: ActionRow) -> Self {
        Self {
            id: r.id,
            agent_id: r.agent_id,
            tool_name: r.tool_name,
            target_entity_type: r.target_entity_type,
            target_record_id: r.target_record_id,
            field_diff: r.field_diff,
            record_version: r.record_version,
            status: r.status,
            execution_result: r.execution_result,
            created_at: r.created_at,
            expires_at: r.expires_at,
            resolved_at: r.resolved_at,
            resolved_by_user_id: r.resolved_by_user_id,
        }
    }
}

/// The keys of a tool's input that name the record rather than change it.
const NOT_CHANGES: &[&str] = &[
    "id",
    "recordId",
    "records",
    "attachmentIds",
    "_sessionToken",
];

fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The changed fields of `input` against the record `before` (fields the
/// input names with a record id suffix are identifiers, not changes).
fn field_diff(before: &Value, input: &Value) -> Value {
    let Some(fields) = input.as_object() else {
        return json!([]);
    };
    let diff: Vec<Value> = fields
        .iter()
        .filter(|(k, _)| !NOT_CHANGES.contains(&k.as_str()) && !k.starts_with('_'))
        .filter(|(k, _)| {
            !(k.ends_with("Id")
                && before.get(k.as_str()).is_none()
                && before.get(snake(k)).is_none())
        })
        .filter_map(|(k, after)| {
            let old = before
                .get(k.as_str())
                .or_else(|| before.get(snake(k)))
                .cloned()
                .unwrap_or(Value::Null);
            (old != *after).then(|| json!({"field": k, "before": old, "after": after}))
        })
        .collect();
    Value::Array(diff)
}

/// Who a proposal belongs to: its proposer (the user, or for an API key
/// the key, as the action log records it). Nobody else reads, confirms or
/// cancels it; `None` (a caller with neither) may propose nothing.
pub fn owner(ctx: &AuthContext) -> Option<Uuid> {
    ctx.actor_id()
}

/// The idempotency key: sha256 of the sorted JSON of the proposal's identity
/// (its proposer included: two users' equal proposals are two actions).
fn idempotency_key(
    ctx: &AuthContext,
    owner: Uuid,
    agent: &str,
    conversation: Option<&str>,
    tool: &str,
    input: &Value,
) -> String {
    // serde_json's maps are sorted by key: the JSON is canonical.
    let identity = json!({
        "tenant": ctx.tenant_id,
        "org": ctx.organization_id(),
        "owner": owner,
        "agent": agent,
        "conversation": conversation,
        "tool": tool,
        "input": input,
    });
    hex::encode(Sha256::digest(identity.to_string().as_bytes()))
}

/// What a model (or a direct caller) sees after proposing a mutation.
pub fn proposal_result(row: &ActionRow) -> Value {
    json!({
        "status": "pending-confirmation",
        "agentId": row.agent_id,
        "toolName": row.tool_name,
        "pendingActionId": row.id,
        "expiresAt": stoa_core::serde_util::timestamp::format(row.expires_at),
        "message": "This change waits for a person's confirmation.",
    })
}

/// Proposes `tool` with `input` for `agent` (the gate already passed): the
/// same proposal of the same proposer while still pending answers the same
/// row; a failed, cancelled or expired one is replaced. The mutation
/// policy of the record's own organization applies too
/// ([`policy::policy_for_record`]): 409 `mutation_blocked_by_policy` when it
/// is read-only, whatever the caller selected.
pub async fn propose(
    db: &Db,
    state: &AiState,
    ctx: &AuthContext,
    agent: &AgentDef,
    tool: &AiTool,
    input: Value,
    conversation: Option<&str>,
) -> Result<ActionRow, AppError> {
    let tenant = ctx.tenant().map_err(|_| AiError::TenantRequired)?;
    let owner = owner(ctx).ok_or_else(AppError::forbidden)?;
    let organization = ctx.organization_id();
    let mut conn = db.conn().await?;
    let before = tool
        .load_before(ToolCall {
            auth: ctx,
            conn: &mut conn,
            input: input.clone(),
        })
        .await?;
    let scope = policy::RecordScope::of(before.as_ref());
    if policy::policy_for_record(&mut conn, ctx, agent, scope).await? == MutationPolicy::ReadOnly {
        return Err(AiError::MutationBlockedByPolicy.into());
    }
    let (entity, record, version, diff) = match &before {
        Some(b) => (
            b["entityType"].as_str().map(String::from),
            match &b["recordId"] {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            },
            b["recordVersion"].as_str().map(String::from),
            // The loader's `after` (what the record would become), else
            // the input's fields.
            field_diff(
                &b["before"],
                b.get("after").filter(|a| a.is_object()).unwrap_or(&input),
            ),
        ),
        None => (None, None, None, json!([])),
    };
    let key = idempotency_key(ctx, owner, agent.id, conversation, tool.name, &input);
    let now = OffsetDateTime::now_utc();
    let ttl =
        time::Duration::try_from(state.config.pending_ttl).unwrap_or(time::Duration::minutes(15));
    let actor = ctx.actor();
    conn.transaction(async |conn| {
        let existing: Option<ActionRow> = pa::table
            .filter(pa::tenant_id.eq(tenant))
            .filter(pa::organization_id.is_not_distinct_from(organization))
            .filter(pa::idempotency_key.eq(&key))
            .filter(pa::created_by_user_id.eq(owner))
            .select(ActionRow::as_select())
            .for_update()
            .first(conn)
            .await
            .optional()?;
        if let Some(row) = existing {
            match row.status.as_str() {
                "pending" if row.expires_at > now => return Ok(row),
                "pending" | "failed" | "cancelled" | "expired" => {
                    diesel::delete(pa::table.find(row.id)).execute(conn).await?;
                }
                _ => {
                    return Err(AppError::conflict(
                        "This change was already confirmed; propose it again with other values",
                    )
                    .with_code("already_confirmed"));
                }
            }
        }
        let row: ActionRow = diesel::insert_into(pa::table)
            .values((
                pa::id.eq(Uuid::new_v4()),
                pa::tenant_id.eq(tenant),
                pa::organization_id.eq(organization),
                pa::agent_id.eq(agent.id),
                pa::tool_name.eq(tool.name),
                pa::conversation_id.eq(conversation),
                pa::target_entity_type.eq(&entity),
                pa::target_record_id.eq(&record),
                pa::normalized_input.eq(&input),
                pa::field_diff.eq(&diff),
                pa::record_version.eq(&version),
                pa::idempotency_key.eq(&key),
                pa::created_by_user_id.eq(owner),
                pa::status.eq("pending"),
                pa::created_at.eq(now),
                pa::expires_at.eq(now + ttl),
            ))
            .returning(ActionRow::as_select())
            .get_result(conn)
            .await?;
        let entry = action_entry(&row, "Propose AI action", None);
        record_batch(conn, &actor, vec![("ai_assistant.actions.propose", entry)]).await?;
        Ok(row)
    })
    .await
}

fn action_entry(row: &ActionRow, label: &str, event: Option<(&str, Value)>) -> LogEntry {
    let entry = LogEntry {
        action_label: Some(label.into()),
        resource_kind: Some("ai_assistant.pending_action".into()),
        resource_id: Some(row.id.to_string()),
        snapshot_after: Some(json!({
            "status": row.status,
            "toolName": row.tool_name,
            "agentId": row.agent_id,
            "targetRecordId": row.target_record_id,
        })),
        tenant_id: Some(row.tenant_id),
        organization_id: row.organization_id,
        ..LogEntry::default()
    };
    match event {
        Some((name, payload)) => entry.with_event(name, payload),
        None => entry,
    }
}

/// The action `id` of the caller's tenant and organization that the caller
/// proposed, or 404 (another user's proposal is not the caller's to read,
/// confirm or cancel, whatever it holds). With `lock`, the row is read
/// `FOR UPDATE` by the same statement that checks its owner, so the check
/// holds until the caller's transaction ends.
pub async fn find(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
    lock: bool,
) -> Result<ActionRow, AppError> {
    let tenant = ctx.tenant_id.ok_or(AiError::PendingActionNotFound)?;
    let owner = owner(ctx).ok_or(AiError::PendingActionNotFound)?;
    let query = pa::table
        .filter(pa::id.eq(id))
        .filter(pa::tenant_id.eq(tenant))
        .filter(pa::organization_id.is_not_distinct_from(ctx.organization_id()))
        .filter(pa::created_by_user_id.eq(owner))
        .select(ActionRow::as_select());
    let row = if lock {
        query.for_update().first(conn).await.optional()?
    } else {
        query.first(conn).await.optional()?
    };
    row.ok_or_else(|| AiError::PendingActionNotFound.into())
}

/// `{ok, pendingAction, mutationResult}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Confirmed {
    pub ok: bool,
    pub pending_action: PendingAction,
    #[schema(value_type = Option<Object>)]
    pub mutation_result: Option<Value>,
}

fn rfc3339(t: OffsetDateTime) -> String {
    stoa_core::serde_util::timestamp::format(t)
}

/// Whether the record's version now (`current`, as its loader writes it) is
/// the one the proposal saw (`proposed`). Versions are timestamps, compared
/// at the precision the proposal kept (a proposal made before timestamps
/// were written to the millisecond kept microseconds); anything else is
/// compared as text.
fn same_version(current: Option<&str>, proposed: Option<&str>) -> bool {
    use stoa_core::serde_util::timestamp::{parse, same_instant};
    match (current, proposed) {
        (Some(c), Some(p)) => match (parse(c), parse(p)) {
            (Some(c), Some(p)) => same_instant(p, c) || same_instant(c, p),
            _ => c == p,
        },
        (c, p) => c == p,
    }
}

/// Confirms action `id` as the caller, who must be its proposer (404
/// otherwise, checked under the row lock), checking in the reference's
/// order: status (a confirmed or failed one is replayed, anything else not
/// pending is 409), expiry (409 `expired`), the agent (404), its features
/// (403), the tool still whitelisted, registered and a mutation (403), the
/// effective policy (403 `read_only_agent`), the tool's features for this
/// caller now (403), the stored input against the tool's schema (412
/// `schema_drift`), the policy of the record's organization now (403
/// `read_only_agent`), the record's version (412 `stale_version`). Then
/// the tool runs as the caller with the grants of this request (command
/// bus, audit, undo, write guards).
///
/// All of it is one transaction on one connection: the action's row lock,
/// the checks (the version check reads the record on the same
/// connection), the tool's write and the outcome recorded on the action.
/// Nothing is ever left `executing`: the action goes from `pending` to
/// `confirmed` or `failed` in the commit that carries the write, and a
/// crash anywhere before it (the process, the connection) rolls back both,
/// leaving the action pending and the record unchanged, so a retry works.
/// The tool runs in a savepoint: when it refuses (a 4xx: a version
/// conflict, a guard, a bad value) its partial writes are undone and the
/// refusal is the action's `failed` outcome; a server error (5xx: the
/// database gone, a bug) rolls back everything and is answered as it is,
/// the action still pending. A confirm arriving while another holds the
/// action is 409 `invalid_status` (it does not wait for the tool's write);
/// once that one committed, a confirm replays its outcome.
pub async fn confirm(
    db: &Db,
    state: &AiState,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<Confirmed, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let row = claim(conn, ctx, id).await?;
        match row.status.as_str() {
            "confirmed" | "failed" => {
                let ok = row.status == "confirmed";
                let result = row.execution_result.clone();
                return Ok(Confirmed {
                    ok,
                    pending_action: row.into(),
                    mutation_result: result,
                });
            }
            "pending" => {}
            _ => return Err(AiError::InvalidStatus.into()),
        }
        let tool = gate(conn, state, ctx, &row).await?;
        let mut input = row.normalized_input.clone();
        if let (Some(version), Some(map)) = (&row.record_version, input.as_object_mut()) {
            map.insert("_recordVersion".into(), Value::String(version.clone()));
        }
        // A savepoint: a refusal undoes the tool's partial writes and leaves
        // this transaction usable for recording it.
        let outcome = conn
            .transaction(async |conn| {
                tool.run(ToolCall {
                    auth: ctx,
                    conn,
                    input,
                })
                .await
            })
            .await;
        let (status, result) = match outcome {
            Ok(value) => (
                "confirmed",
                json!({
                    "recordId": value.get("recordId").cloned().unwrap_or(Value::Null),
                    "commandName": value.get("commandName").cloned().unwrap_or(Value::Null),
                    "result": value,
                }),
            ),
            Err(err) if err.status().is_server_error() => return Err(err),
            Err(err) => (
                "failed",
                json!({
                    "error": {
                        "code": err.code().unwrap_or("handler_error"),
                        "message": err.message(),
                        "status": err.status().as_u16(),
                    }
                }),
            ),
        };
        let row = record_outcome(conn, ctx, &row, status, &result).await?;
        Ok(Confirmed {
            ok: status == "confirmed",
            mutation_result: row.execution_result.clone(),
            pending_action: row.into(),
        })
    })
    .await
}

/// [`find`] locked for a confirm, without waiting: a row another confirm
/// (or a cancel) holds now is 409 `invalid_status`, as an action that is
/// not pending (the other one is resolving it), instead of a request
/// waiting for that one's write.
async fn claim(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<ActionRow, AppError> {
    let tenant = ctx.tenant_id.ok_or(AiError::PendingActionNotFound)?;
    let owner = owner(ctx).ok_or(AiError::PendingActionNotFound)?;
    let locked: Option<ActionRow> = pa::table
        .filter(pa::id.eq(id))
        .filter(pa::tenant_id.eq(tenant))
        .filter(pa::organization_id.is_not_distinct_from(ctx.organization_id()))
        .filter(pa::created_by_user_id.eq(owner))
        .select(ActionRow::as_select())
        .for_update()
        .skip_locked()
        .first(conn)
        .await
        .optional()?;
    match locked {
        Some(row) => Ok(row),
        // Skipped or missing: the unlocked read tells which.
        None => {
            find(conn, ctx, id, false).await?;
            Err(AiError::InvalidStatus.into())
        }
    }
}

/// The confirm's checks after the status (see [`confirm`]), on the
/// confirm's connection; answers the tool to run.
async fn gate<'s>(
    conn: &mut AsyncPgConnection,
    state: &'s AiState,
    ctx: &AuthContext,
    row: &ActionRow,
) -> Result<&'s AiTool, AppError> {
    if row.expires_at <= OffsetDateTime::now_utc() {
        return Err(
            AppError::from(AiError::Expired).with_field("expiresAt", rfc3339(row.expires_at))
        );
    }
    let agent = policy::known_agent(state, &row.agent_id).map_err(|e| match e {
        AiError::InvalidAgentId => AiError::AgentUnknown,
        other => other,
    })?;
    if !agent.required_features.iter().all(|f| ctx.has(f)) {
        return Err(AiError::AgentFeaturesDenied.into());
    }
    let tool = state
        .registry
        .ai_tool(&row.tool_name)
        .filter(|t| t.kind == ToolKind::Mutation && agent.allowed_tools.contains(&t.name))
        .ok_or(AiError::ToolNoLongerAllowed)?;
    if policy::effective_policy(conn, ctx, agent).await? == MutationPolicy::ReadOnly {
        return Err(AiError::ReadOnlyAgent.into());
    }
    if !tool.features.iter().all(|f| ctx.has(f)) {
        return Err(AppError::from(AiError::ToolFeaturesDenied)
            .with_field("requiredFeatures", tool.features));
    }
    let problems = validate::check(&(tool.input_schema)(), &row.normalized_input);
    if !problems.is_empty() {
        return Err(AppError::from(AiError::SchemaDrift).with_field("issues", problems));
    }
    let current = tool
        .load_before(ToolCall {
            auth: ctx,
            conn: &mut *conn,
            input: row.normalized_input.clone(),
        })
        .await?;
    let scope = policy::RecordScope::of(current.as_ref());
    if policy::policy_for_record(conn, ctx, agent, scope).await? == MutationPolicy::ReadOnly {
        return Err(AiError::ReadOnlyAgent.into());
    }
    if row.record_version.is_some() {
        let version = current
            .as_ref()
            .and_then(|b| b["recordVersion"].as_str().map(String::from));
        if !same_version(version.as_deref(), row.record_version.as_deref()) {
            return Err(AppError::from(AiError::StaleVersion)
                .with_field("recordId", row.target_record_id.clone()));
        }
    }
    Ok(tool)
}

/// Resolves `row` as `status` with `result` (who and when included) and
/// records it with `ai.action.confirmed`, in the confirm's transaction.
async fn record_outcome(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    row: &ActionRow,
    status: &str,
    result: &Value,
) -> Result<ActionRow, AppError> {
    let row: ActionRow = diesel::update(pa::table.find(row.id))
        .set((
            pa::status.eq(status),
            pa::execution_result.eq(result),
            pa::resolved_at.eq(OffsetDateTime::now_utc()),
            pa::resolved_by_user_id.eq(ctx.user_id),
        ))
        .returning(ActionRow::as_select())
        .get_result(conn)
        .await?;
    let payload = event_payload(&row, ctx.user_id, None);
    let entry = action_entry(
        &row,
        "Confirm AI action",
        Some(("ai.action.confirmed", payload)),
    );
    record_batch(
        conn,
        &ctx.actor(),
        vec![("ai_assistant.actions.confirm", entry)],
    )
    .await?;
    Ok(row)
}

fn event_payload(row: &ActionRow, user: Option<Uuid>, reason: Option<&str>) -> Value {
    let mut payload = json!({
        "pendingActionId": row.id,
        "agentId": row.agent_id,
        "toolName": row.tool_name,
        "status": row.status,
        "tenantId": row.tenant_id,
        "organizationId": row.organization_id,
        "userId": row.created_by_user_id,
        "resolvedByUserId": user,
        "resolvedAt": row.resolved_at.map(rfc3339),
        "executionResult": row.execution_result,
    });
    if let (Some(reason), Some(map)) = (reason, payload.as_object_mut()) {
        map.insert("reason".into(), Value::String(reason.into()));
    }
    payload
}

/// What a cancel did.
pub enum Cancelled {
    /// Cancelled now, or already cancelled (no second event).
    Done(ActionRow),
    /// It had expired: now `expired` (the event emitted), answered 409.
    Expired(ActionRow),
}

/// Cancels action `id`: `ai.action.cancelled` once; a repeat answers the
/// cancelled row; another final state is 409; an overdue one expires.
pub async fn cancel(
    db: &Db,
    ctx: &AuthContext,
    id: Uuid,
    reason: Option<String>,
) -> Result<Cancelled, AppError> {
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let row = find(conn, ctx, id, true).await?;
        match row.status.as_str() {
            "cancelled" => return Ok(Cancelled::Done(row)),
            "pending" => {}
            _ => return Err(AiError::InvalidStatus.into()),
        }
        let now = OffsetDateTime::now_utc();
        if row.expires_at <= now {
            let row = expire_row(conn, &actor, row, now).await?;
            return Ok(Cancelled::Expired(row));
        }
        let message = reason.clone().unwrap_or_else(|| "Cancelled by user".into());
        let result = json!({"error": {"code": "cancelled_by_user", "message": message}});
        let row: ActionRow = diesel::update(pa::table.find(row.id))
            .set((
                pa::status.eq("cancelled"),
                pa::resolved_at.eq(now),
                pa::resolved_by_user_id.eq(ctx.user_id),
                pa::execution_result.eq(&result),
            ))
            .returning(ActionRow::as_select())
            .get_result(conn)
            .await?;
        let payload = event_payload(&row, ctx.user_id, reason.as_deref());
        let entry = action_entry(
            &row,
            "Cancel AI action",
            Some(("ai.action.cancelled", payload)),
        );
        record_batch(conn, &actor, vec![("ai_assistant.actions.cancel", entry)]).await?;
        Ok(Cancelled::Done(row))
    })
    .await
}

async fn expire_row(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    row: ActionRow,
    now: OffsetDateTime,
) -> Result<ActionRow, AppError> {
    let row: ActionRow = diesel::update(pa::table.find(row.id))
        .set((pa::status.eq("expired"), pa::resolved_at.eq(now)))
        .returning(ActionRow::as_select())
        .get_result(conn)
        .await?;
    let mut payload = event_payload(&row, None, None);
    if let Some(map) = payload.as_object_mut() {
        map.insert("expiresAt".into(), Value::String(rfc3339(row.expires_at)));
        map.insert("expiredAt".into(), Value::String(rfc3339(now)));
    }
    let entry = action_entry(
        &row,
        "Expire AI action",
        Some(("ai.action.expired", payload)),
    );
    record_batch(conn, actor, vec![("ai_assistant.actions.expire", entry)]).await?;
    Ok(row)
}

/// How long after its claim an `executing` action is taken as abandoned.
/// Only a stoa from before the one-transaction confirm wrote `executing`
/// (claim, then the tool in its own transaction, then the outcome); one
/// that died in between left the row there for good, and nobody knows
/// whether the tool's write committed (its record's history does). Past
/// this bound (no confirm's request lives that long) the expiry job marks
/// such a row `failed` with the code `interrupted`, so it is final, replayed
/// by a confirm, and a new proposal may replace it.
pub const STALE_EXECUTING: time::Duration = time::Duration::minutes(15);

/// Fails `executing` rows claimed more than [`STALE_EXECUTING`] ago (at
/// most `limit`), each with `ai.action.confirmed` (status `failed`), the
/// event the interrupted confirm would have emitted; returns how many.
async fn fail_abandoned(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    limit: i64,
    now: OffsetDateTime,
) -> Result<usize, AppError> {
    let abandoned: Vec<ActionRow> = pa::table
        .filter(pa::status.eq("executing"))
        .filter(
            pa::resolved_at
                .le(now - STALE_EXECUTING)
                .or(pa::resolved_at.is_null()),
        )
        .filter(pa::created_at.le(now - STALE_EXECUTING))
        .order(pa::created_at.asc())
        .limit(limit)
        .select(ActionRow::as_select())
        .for_update()
        .skip_locked()
        .load(conn)
        .await?;
    let result = json!({"error": {
        "code": "interrupted",
        "message": "The confirm was interrupted before it recorded its outcome; \
                    the record's history shows whether the change was written",
    }});
    for row in &abandoned {
        let row: ActionRow = diesel::update(pa::table.find(row.id))
            .set((pa::status.eq("failed"), pa::execution_result.eq(&result)))
            .returning(ActionRow::as_select())
            .get_result(conn)
            .await?;
        let payload = event_payload(&row, row.resolved_by_user_id, None);
        let entry = action_entry(
            &row,
            "Fail interrupted AI action",
            Some(("ai.action.confirmed", payload)),
        );
        record_batch(
            conn,
            actor,
            vec![("ai_assistant.actions.interrupted", entry)],
        )
        .await?;
    }
    Ok(abandoned.len())
}

/// Expires every overdue pending action (the recurring job) and fails
/// abandoned `executing` ones ([`STALE_EXECUTING`]), at most `limit` of
/// each per run; returns how many rows it resolved.
pub async fn expire_due(db: &Db, actor: &Actor, limit: i64) -> Result<usize, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let now = OffsetDateTime::now_utc();
        let failed = fail_abandoned(conn, actor, limit, now).await?;
        let due: Vec<ActionRow> = pa::table
            .filter(pa::status.eq("pending"))
            .filter(pa::expires_at.le(now))
            .order(pa::expires_at.asc())
            .limit(limit)
            .select(ActionRow::as_select())
            .for_update()
            .skip_locked()
            .load(conn)
            .await?;
        let count = due.len();
        for row in due {
            expire_row(conn, actor, row, now).await?;
        }
        Ok(count + failed)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_lists_changed_fields_only() {
        let before = json!({"id": "d", "title": "A", "pipelineStageId": "s1", "is_active": true});
        let input = json!({"dealId": "d", "title": "A", "pipelineStageId": "s2", "isActive": false, "_recordVersion": "v"});
        assert_eq!(
            field_diff(&before, &input),
            json!([
                {"field": "isActive", "before": true, "after": false},
                {"field": "pipelineStageId", "before": "s1", "after": "s2"}
            ])
        );
    }
}
