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
//!
//! - [`propose`]: the proposal (its diff and idempotency key);
//! - [`confirm`]: the confirm, one transaction;
//! - [`expire`]: cancel and the expiry job.

mod confirm;
mod expire;
mod propose;

pub use confirm::{Confirmed, confirm};
pub use expire::{Cancelled, STALE_EXECUTING, cancel, expire_due};
pub use propose::propose;

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

/// Who a proposal belongs to: its proposer (the user, or for an API key
/// the key, as the action log records it). Nobody else reads, confirms or
/// cancels it; `None` (a caller with neither) may propose nothing.
pub fn owner(ctx: &AuthContext) -> Option<Uuid> {
    ctx.actor_id()
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

fn rfc3339(t: OffsetDateTime) -> String {
    stoa_core::serde_util::timestamp::format(t)
}
