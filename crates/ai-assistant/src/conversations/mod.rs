//! Chat conversations: idempotent create (with the owner participant),
//! the caller's list by last message with an ISO cursor, one conversation
//! with its messages, partial update, soft delete (conversation and
//! messages in one transaction) and the import of a browser-local
//! conversation (at most 100 messages; known `clientMessageId`s skipped).
//! Owners see theirs, active participants may read, and holders of
//! `ai_assistant.conversations.manage` see every one of their tenant and
//! organization; anyone else gets 404.

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{LogEntry, record_batch};
use stoa_core::db::Db;
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::list::{COUNT_AHEAD, CountUpTo, TotalMode};
use stoa_core::prepared::Cached;
use stoa_core::serde_util::timestamp::truncate;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;
use validator::Validate;

use crate::CONVERSATIONS_MANAGE;
use crate::error::AiError;
use crate::schema::{
    ai_chat_conversation_participants as cp, ai_chat_conversations as cc, ai_chat_messages as cm,
};
use crate::state::AiState;

mod create;
mod detail;
mod import;
mod list;

pub use create::*;
pub use detail::*;
pub use import::*;
pub use list::*;

#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = cc)]
pub struct ConversationRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub conversation_id: String,
    pub agent_id: String,
    pub owner_user_id: Uuid,
    pub title: Option<String>,
    pub status: String,
    pub visibility: String,
    pub page_context: Option<Value>,
    pub last_message_at: Option<OffsetDateTime>,
    pub imported_from_local_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub deleted_at: Option<OffsetDateTime>,
}

/// A conversation summary.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub conversation_id: String,
    pub agent_id: String,
    pub title: Option<String>,
    pub status: String,
    pub visibility: String,
    #[schema(value_type = Option<Object>)]
    pub page_context: Option<Value>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_message_at: Option<OffsetDateTime>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub imported_from_local_at: Option<OffsetDateTime>,
    pub participant_count: i64,
    pub is_owner: bool,
}

fn summary(row: ConversationRow, ctx: &AuthContext) -> Summary {
    Summary {
        is_owner: ctx.user_id == Some(row.owner_user_id),
        conversation_id: row.conversation_id,
        agent_id: row.agent_id,
        title: row.title,
        status: row.status,
        visibility: row.visibility,
        page_context: row.page_context,
        created_at: row.created_at,
        updated_at: row.updated_at,
        last_message_at: row.last_message_at,
        imported_from_local_at: row.imported_from_local_at,
        participant_count: 0,
    }
}

pub(crate) fn scope(ctx: &AuthContext) -> Result<(Uuid, Option<Uuid>, Uuid), AppError> {
    let tenant = ctx.tenant_id.ok_or(AiError::TenantRequired)?;
    let user = ctx.user_id.ok_or(AiError::Forbidden)?;
    Ok((tenant, ctx.organization_id(), user))
}

pub(crate) fn entry(row: &ConversationRow, label: &str) -> LogEntry {
    LogEntry {
        action_label: Some(label.into()),
        resource_kind: Some("ai_assistant.conversation".into()),
        resource_id: Some(row.id.to_string()),
        tenant_id: Some(row.tenant_id),
        organization_id: row.organization_id,
        ..LogEntry::default()
    }
}

/// The live conversation `key` of the caller's tenant and organization,
/// whoever owns it.
pub(crate) async fn lookup(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    key: &str,
    lock: bool,
) -> Result<Option<ConversationRow>, AppError> {
    let (tenant, org, _) = scope(ctx)?;
    let query = cc::table
        .filter(cc::tenant_id.eq(tenant))
        .filter(cc::organization_id.is_not_distinct_from(org))
        .filter(cc::conversation_id.eq(key))
        .filter(cc::deleted_at.is_null())
        .select(ConversationRow::as_select());
    Ok(if lock {
        query.for_update().first(conn).await.optional()?
    } else {
        query.first(conn).await.optional()?
    })
}

/// [`lookup`], 404 when there is none.
pub(crate) async fn live(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    key: &str,
    lock: bool,
) -> Result<ConversationRow, AppError> {
    lookup(conn, ctx, key, lock)
        .await?
        .ok_or_else(|| AiError::ConversationNotFound.into())
}

/// The live conversation `key` the caller may read (owner, manager of its
/// organization, or an active participant when `read` is set); 404
/// otherwise.
async fn visible(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    key: &str,
    read: bool,
    lock: bool,
) -> Result<ConversationRow, AppError> {
    let (_, _, user) = scope(ctx)?;
    let row = live(conn, ctx, key, lock).await?;
    // A manager reaches others' conversations only inside its organizations
    // (the one organization-scope rule: a tenant-level conversation is not a
    // restricted manager's, whatever it selects).
    let managed = ctx.has(CONVERSATIONS_MANAGE)
        && ctx.reach(Some(row.tenant_id), row.organization_id) == stoa_acl::Reach::Write;
    if row.owner_user_id == user || managed {
        return Ok(row);
    }
    if read {
        let participant: Option<Uuid> = cp::table
            .filter(cp::conversation_id.eq(row.id))
            .filter(cp::user_id.eq(user))
            .filter(cp::deleted_at.is_null())
            .select(cp::id)
            .first(conn)
            .await
            .optional()?;
        if participant.is_some() {
            return Ok(row);
        }
    }
    Err(AiError::ConversationNotFound.into())
}

/// 400 `organization_not_found` when the caller's selected organization is
/// deleted or inactive (asked of the directory); no organization selected
/// passes.
pub async fn require_active_organization(
    conn: &mut AsyncPgConnection,
    state: &AiState,
    ctx: &AuthContext,
) -> Result<(), AppError> {
    let (Some(tenant), Some(org)) = (ctx.tenant_id, ctx.organization_id()) else {
        return Ok(());
    };
    if state
        .organizations
        .organization_active(conn, tenant, org)
        .await?
    {
        Ok(())
    } else {
        Err(AiError::OrganizationNotFound.into())
    }
}
