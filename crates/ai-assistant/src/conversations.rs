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

#[derive(Debug, Serialize, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateConversation {
    #[validate(length(min = 1, max = 256))]
    pub agent_id: String,
    #[validate(length(min = 1, max = 128))]
    pub conversation_id: Option<String>,
    #[validate(length(min = 1, max = 200))]
    pub title: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub page_context: Option<Value>,
}

/// Creates or returns the caller's conversation: `(summary, created)`; a
/// conversation of that id owned by someone else is 404.
pub async fn create(
    db: &Db,
    ctx: &AuthContext,
    input: CreateConversation,
    imported: bool,
) -> Result<(Summary, bool), AppError> {
    let (tenant, org, user) = scope(ctx)?;
    let key = input
        .conversation_id
        .clone()
        .unwrap_or_else(|| Uuid::new_v4().to_string());
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let (row, created) = create_in(conn, tenant, org, user, &key, &input, imported).await?;
        if created {
            record_batch(
                conn,
                &actor,
                vec![(
                    "ai_assistant.conversations.create",
                    entry(&row, "Create AI conversation"),
                )],
            )
            .await?;
        }
        Ok((summary(row, ctx), created))
    })
    .await
}

pub(crate) async fn create_in(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    org: Option<Uuid>,
    user: Uuid,
    key: &str,
    input: &CreateConversation,
    imported: bool,
) -> Result<(ConversationRow, bool), AppError> {
    // One creator per key at a time (the unique index would refuse the second).
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1))")
        .bind::<diesel::sql_types::Text, _>(format!("ai_conv:{tenant}:{org:?}:{key}"))
        .execute(conn)
        .await?;
    let existing: Option<ConversationRow> = cc::table
        .filter(cc::tenant_id.eq(tenant))
        .filter(cc::organization_id.is_not_distinct_from(org))
        .filter(cc::conversation_id.eq(key))
        .filter(cc::deleted_at.is_null())
        .select(ConversationRow::as_select())
        .first(conn)
        .await
        .optional()?;
    if let Some(row) = existing {
        if row.owner_user_id != user {
            return Err(AiError::ConversationNotFound.into());
        }
        return Ok((row, false));
    }
    let now = OffsetDateTime::now_utc();
    let row: ConversationRow = diesel::insert_into(cc::table)
        .values((
            cc::id.eq(Uuid::new_v4()),
            cc::tenant_id.eq(tenant),
            cc::organization_id.eq(org),
            cc::conversation_id.eq(key),
            cc::agent_id.eq(&input.agent_id),
            cc::owner_user_id.eq(user),
            cc::title.eq(&input.title),
            cc::page_context.eq(&input.page_context),
            cc::imported_from_local_at.eq(imported.then_some(now)),
        ))
        .returning(ConversationRow::as_select())
        .get_result(conn)
        .await?;
    diesel::insert_into(cp::table)
        .values((
            cp::id.eq(Uuid::new_v4()),
            cp::tenant_id.eq(tenant),
            cp::organization_id.eq(org),
            cp::conversation_id.eq(row.id),
            cp::user_id.eq(user),
            cp::role.eq("owner"),
        ))
        .execute(conn)
        .await?;
    Ok((row, true))
}

/// The conversations the list shows the caller (filters and keyset
/// position, no order or window).
fn listed(
    ctx: &AuthContext,
    (tenant, org, user): (Uuid, Option<Uuid>, Uuid),
    agent: Option<&str>,
    status: Option<&str>,
    cursor: Option<OffsetDateTime>,
) -> cc::BoxedQuery<'static, diesel::pg::Pg> {
    let mut query = cc::table
        .filter(cc::tenant_id.eq(tenant))
        .filter(cc::deleted_at.is_null())
        .into_boxed();
    // Equality (or IS NULL) rather than IS NOT DISTINCT FROM, so the
    // activity index serves the filter.
    query = match org {
        Some(org) => query.filter(cc::organization_id.eq(org)),
        None => query.filter(cc::organization_id.is_null()),
    };
    if !ctx.has(CONVERSATIONS_MANAGE) {
        let shared = cp::table
            .filter(cp::user_id.eq(user))
            .filter(cp::deleted_at.is_null())
            .select(cp::conversation_id);
        query = query.filter(cc::owner_user_id.eq(user).or(cc::id.eq_any(shared)));
    }
    if let Some(a) = agent {
        query = query.filter(cc::agent_id.eq(a.to_string()));
    }
    if let Some(s) = status {
        query = query.filter(cc::status.eq(s.to_string()));
    }
    if let Some(c) = cursor {
        query = query.filter(cc::activity_at.lt(c));
    }
    query
}

/// How a page of `limit + 1` rows (newest first) was cut.
enum Cut {
    /// `rows` is the page.
    Done,
    /// Every row of the page is in the millisecond of this time: the page
    /// must be that whole millisecond.
    WholeMillisecond(OffsetDateTime),
}

/// Cuts `rows` (up to `limit + 1`, newest first by `at`) to a page that
/// ends between two milliseconds. Cursors are times as the list writes them
/// (milliseconds) and continue with `at < cursor`, so a page that ended
/// inside a millisecond would make the next one skip the rest of it: the
/// page drops its last millisecond when the row after the page shares it.
fn cut_at_millisecond<T>(rows: &mut Vec<T>, limit: i64, at: impl Fn(&T) -> OffsetDateTime) -> Cut {
    let limit = usize::try_from(limit).unwrap_or(0);
    let Some(first_after) = rows.get(limit) else {
        return Cut::Done;
    };
    let boundary = truncate(at(first_after));
    rows.truncate(limit);
    let keep = rows
        .iter()
        .take_while(|r| truncate(at(r)) != boundary)
        .count();
    if keep == 0 {
        return Cut::WholeMillisecond(boundary);
    }
    rows.truncate(keep);
    Cut::Done
}

/// `{items, nextCursor, total, totalCapped}`: newest activity first (last
/// message, else creation); `cursor` is the previous page's last
/// `lastMessageAt` (or `createdAt`), a keyset position. One statement: the
/// page and its total (counted from the cursor on, up to 1,000 rows past
/// it unless `total` asks for the exact count or none).
pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    agent: Option<&str>,
    status: Option<&str>,
    cursor: Option<OffsetDateTime>,
    limit: i64,
    total: TotalMode,
) -> Result<Listed, AppError> {
    let scope = scope(ctx)?;
    let deps = ReadDeps::new(READ_DEPS, Some(scope.0));
    let count_limit = match total {
        TotalMode::Capped => Some(COUNT_AHEAD + 1),
        TotalMode::Exact => None,
        TotalMode::Skip => Some(0),
    };
    // The capped count walks the list's own order: the rows past a deep
    // cursor are the oldest, which a sequential scan reaches last (13 ms
    // over 100k conversations against 0.3 ms along the index).
    let counted = CountUpTo::new(
        listed(ctx, scope, agent, status, cursor)
            .select(cc::id)
            .order((cc::activity_at.desc(), cc::id.desc())),
        count_limit,
    );
    let page = listed(ctx, scope, agent, status, cursor)
        .select((ConversationRow::as_select(), counted, versions(deps)))
        .order((cc::activity_at.desc(), cc::id.desc()))
        .limit(limit + 1);
    let rows: Vec<(ConversationRow, i64, Vec<i64>)> = Cached(page).load(conn).await?;
    let count = <[_]>::first(&rows).map_or(0, |(_, c, _)| *c);
    let mut read_versions = <[_]>::first(&rows).map(|(_, _, v)| v.clone());
    let mut rows: Vec<(ConversationRow, i64)> = rows.into_iter().map(|(r, c, _)| (r, c)).collect();
    let activity = |(r, _): &(ConversationRow, i64)| r.last_message_at.unwrap_or(r.created_at);
    let mut more = rows.len() as i64 > limit;
    match cut_at_millisecond(&mut rows, limit, activity) {
        Cut::Done => {}
        Cut::WholeMillisecond(at) => {
            // Every row of the page shares one millisecond: the page is that
            // millisecond whole, so the next cursor skips none of it.
            let start = truncate(at);
            let end = start + time::Duration::MILLISECOND;
            let group = listed(ctx, scope, agent, status, cursor)
                .filter(cc::activity_at.ge(start))
                .filter(cc::activity_at.lt(end))
                .select(ConversationRow::as_select())
                .order((cc::activity_at.desc(), cc::id.desc()))
                .load::<ConversationRow>(conn)
                .await?;
            rows = group.into_iter().map(|r| (r, count)).collect();
            // Read in statements of their own: not one snapshot, not kept.
            read_versions = None;
            let after: Vec<Uuid> = listed(ctx, scope, agent, status, Some(start))
                .select(cc::id)
                .limit(1)
                .load(conn)
                .await?;
            more = !after.is_empty();
        }
    }
    // The cursor is the last row's time as the list writes it (milliseconds):
    // pages end between milliseconds, so `activity_at < cursor` continues
    // exactly after this page.
    let next = more
        .then(|| rows.last().map(activity))
        .flatten()
        .map(stoa_core::serde_util::timestamp::format);
    let (total, capped) = match total {
        TotalMode::Capped => (Some(count.min(COUNT_AHEAD)), count > COUNT_AHEAD),
        TotalMode::Exact => (Some(count), false),
        TotalMode::Skip => (None, false),
    };
    let items: Vec<Summary> = rows.into_iter().map(|(r, _)| summary(r, ctx)).collect();
    Ok(Listed {
        page: ConversationPage {
            items,
            next_cursor: next,
            total,
            total_capped: capped,
        },
        deps,
        versions: read_versions,
    })
}

/// The read model of the conversation list: every write to a tenant's
/// conversations or participants bumps its version (migration
/// `ai_assistant_conversations_read_version`); the caller's permissions
/// move `acl_version`, which a kept answer checks too.
pub const READ_DEPS: &[&str] = &["ai_assistant.conversations"];

/// `{items, nextCursor, total, totalCapped}`, serialized straight from the
/// rows (no intermediate JSON value).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationPage {
    pub items: Vec<Summary>,
    pub next_cursor: Option<String>,
    pub total: Option<i64>,
    pub total_capped: bool,
}

/// A page and the read versions it was computed from (`None`: not kept).
pub struct Listed {
    pub page: ConversationPage,
    pub deps: ReadDeps,
    pub versions: Option<Vec<i64>>,
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

#[derive(Debug, Queryable, Selectable, Serialize, ToSchema)]
#[diesel(table_name = cm)]
#[serde(rename_all = "camelCase")]
pub struct MessageView {
    pub id: Uuid,
    pub client_message_id: Option<String>,
    pub role: String,
    pub content: String,
    #[schema(value_type = Option<Vec<Object>>)]
    pub ui_parts: Option<Value>,
    #[schema(value_type = Option<Vec<String>>)]
    pub attachment_ids: Option<Value>,
    pub model: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(rename = "senderUserId")]
    pub created_by_user_id: Option<Uuid>,
}

/// `{conversation, messages (ascending), nextCursor}`.
pub async fn get(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    key: &str,
    before: Option<OffsetDateTime>,
    limit: i64,
) -> Result<Value, AppError> {
    let row = visible(conn, ctx, key, true, false).await?;
    let mut query = cm::table
        .filter(cm::conversation_id.eq(row.id))
        .filter(cm::deleted_at.is_null())
        .select(MessageView::as_select())
        .order((cm::created_at.desc(), cm::id.desc()))
        .limit(limit + 1)
        .into_boxed();
    if let Some(b) = before {
        query = query.filter(cm::created_at.lt(b));
    }
    let mut messages: Vec<MessageView> = query.load(conn).await?;
    let mut more = messages.len() as i64 > limit;
    if let Cut::WholeMillisecond(at) = cut_at_millisecond(&mut messages, limit, |m| m.created_at) {
        let start = truncate(at);
        let mut group = cm::table
            .filter(cm::conversation_id.eq(row.id))
            .filter(cm::deleted_at.is_null())
            .filter(cm::created_at.ge(start))
            .filter(cm::created_at.lt(start + time::Duration::MILLISECOND))
            .select(MessageView::as_select())
            .order((cm::created_at.desc(), cm::id.desc()))
            .into_boxed();
        if let Some(b) = before {
            group = group.filter(cm::created_at.lt(b));
        }
        messages = group.load(conn).await?;
        let older: Vec<Uuid> = cm::table
            .filter(cm::conversation_id.eq(row.id))
            .filter(cm::deleted_at.is_null())
            .filter(cm::created_at.lt(start))
            .select(cm::id)
            .limit(1)
            .load(conn)
            .await?;
        more = !older.is_empty();
    }
    messages.reverse();
    let next = more
        .then(|| <[_]>::first(&messages).map(|m| m.created_at))
        .flatten()
        .map(stoa_core::serde_util::timestamp::format);
    let participants: i64 = cp::table
        .filter(cp::conversation_id.eq(row.id))
        .filter(cp::deleted_at.is_null())
        .filter(cp::user_id.ne(row.owner_user_id))
        .count()
        .get_result(conn)
        .await?;
    let mut conversation = summary(row, ctx);
    conversation.participant_count = participants;
    Ok(json!({"conversation": conversation, "messages": messages, "nextCursor": next}))
}

#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchConversation {
    #[serde(default, deserialize_with = "stoa_core::serde_util::double_option")]
    #[schema(value_type = Option<String>)]
    pub title: Option<Option<String>>,
    /// `open` or `closed`.
    pub status: Option<String>,
    #[serde(default, deserialize_with = "stoa_core::serde_util::double_option")]
    #[schema(value_type = Option<Object>)]
    pub page_context: Option<Option<Value>>,
}

pub async fn patch(
    db: &Db,
    ctx: &AuthContext,
    key: &str,
    input: PatchConversation,
) -> Result<Summary, AppError> {
    if input.title.is_none() && input.status.is_none() && input.page_context.is_none() {
        return Err(AiError::Validation("Provide title, status or pageContext".into()).into());
    }
    if let Some(s) = &input.status
        && !matches!(s.as_str(), "open" | "closed")
    {
        return Err(AiError::Validation("status must be open or closed".into()).into());
    }
    if let Some(Some(t)) = &input.title
        && (t.is_empty() || t.chars().count() > 200)
    {
        return Err(AiError::Validation("title must have 1-200 characters".into()).into());
    }
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let mut row = visible(conn, ctx, key, false, true).await?;
        if let Some(t) = input.title {
            row.title = t;
        }
        if let Some(s) = input.status {
            row.status = s;
        }
        if let Some(p) = input.page_context {
            row.page_context = p;
        }
        let row: ConversationRow = diesel::update(cc::table.find(row.id))
            .set((
                cc::title.eq(&row.title),
                cc::status.eq(&row.status),
                cc::page_context.eq(&row.page_context),
                cc::updated_at.eq(OffsetDateTime::now_utc()),
            ))
            .returning(ConversationRow::as_select())
            .get_result(conn)
            .await?;
        record_batch(
            conn,
            &actor,
            vec![(
                "ai_assistant.conversations.update",
                entry(&row, "Update AI conversation"),
            )],
        )
        .await?;
        Ok(summary(row, ctx))
    })
    .await
}

/// Soft-deletes the conversation and its messages in one transaction.
pub async fn delete(db: &Db, ctx: &AuthContext, key: &str) -> Result<(), AppError> {
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let row = visible(conn, ctx, key, false, true).await?;
        let now = OffsetDateTime::now_utc();
        diesel::update(cc::table.find(row.id))
            .set((
                cc::deleted_at.eq(now),
                cc::status.eq("closed"),
                cc::updated_at.eq(now),
            ))
            .execute(conn)
            .await?;
        diesel::update(
            cm::table
                .filter(cm::conversation_id.eq(row.id))
                .filter(cm::deleted_at.is_null()),
        )
        .set(cm::deleted_at.eq(now))
        .execute(conn)
        .await?;
        record_batch(
            conn,
            &actor,
            vec![(
                "ai_assistant.conversations.delete",
                entry(&row, "Delete AI conversation"),
            )],
        )
        .await?;
        Ok(())
    })
    .await
}

#[derive(Debug, Serialize, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportMessage {
    #[validate(length(max = 128))]
    pub client_message_id: Option<String>,
    /// `user` or `assistant` (anything else is 400).
    pub role: String,
    #[validate(length(max = 64000))]
    pub content: String,
    #[schema(value_type = Option<Vec<Object>>)]
    pub ui_parts: Option<Vec<Value>>,
    pub attachment_ids: Option<Vec<String>>,
    pub model: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportConversation {
    #[validate(nested)]
    pub conversation: CreateConversation,
    pub status: Option<String>,
    #[validate(length(max = 100), nested)]
    pub messages: Vec<ImportMessage>,
}

/// Imports a browser-local conversation: create-or-get, then the messages
/// whose `clientMessageId` is new (those without one, or known, are skipped).
pub async fn import(
    db: &Db,
    ctx: &AuthContext,
    input: ImportConversation,
) -> Result<Value, AppError> {
    let (tenant, org, user) = scope(ctx)?;
    if input.conversation.conversation_id.is_none() {
        return Err(AiError::Validation("conversation.conversationId is required".into()).into());
    }
    crate::validate::client_roles(input.messages.iter().map(|m| m.role.as_str()))?;
    let key = input
        .conversation
        .conversation_id
        .clone()
        .unwrap_or_default();
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let (row, _) = create_in(conn, tenant, org, user, &key, &input.conversation, true).await?;
        let known: Vec<Option<String>> = cm::table
            .filter(cm::conversation_id.eq(row.id))
            .filter(cm::deleted_at.is_null())
            .select(cm::client_message_id)
            .load(conn)
            .await?;
        let known: std::collections::HashSet<String> = known.into_iter().flatten().collect();
        let now = OffsetDateTime::now_utc();
        let mut seen = std::collections::HashSet::new();
        let mut imported = 0i64;
        let mut skipped = 0i64;
        for m in &input.messages {
            let Some(id) = m
                .client_message_id
                .as_ref()
                .filter(|id| !known.contains(*id) && seen.insert((*id).clone()))
            else {
                skipped += 1;
                continue;
            };
            diesel::insert_into(cm::table)
                .values((
                    cm::id.eq(Uuid::new_v4()),
                    cm::tenant_id.eq(tenant),
                    cm::organization_id.eq(org),
                    cm::conversation_id.eq(row.id),
                    cm::client_message_id.eq(id),
                    cm::role.eq(&m.role),
                    cm::content.eq(&m.content),
                    cm::ui_parts.eq(m.ui_parts.as_ref().map(|p| json!(p))),
                    cm::attachment_ids.eq(m.attachment_ids.as_ref().map(|p| json!(p))),
                    cm::model.eq(&m.model),
                    cm::metadata.eq(&m.metadata),
                    cm::created_by_user_id.eq((m.role == "user").then_some(user)),
                    cm::created_at.eq(now),
                ))
                .execute(conn)
                .await?;
            imported += 1;
        }
        let mut set_status = row.status.clone();
        if let Some(s) = input
            .status
            .as_deref()
            .filter(|s| matches!(*s, "open" | "closed"))
        {
            set_status = s.to_string();
        }
        let row: ConversationRow = diesel::update(cc::table.find(row.id))
            .set((
                cc::status.eq(&set_status),
                cc::last_message_at.eq(if imported > 0 {
                    Some(now)
                } else {
                    row.last_message_at
                }),
                cc::imported_from_local_at.eq(Some(now)),
                cc::updated_at.eq(now),
            ))
            .returning(ConversationRow::as_select())
            .get_result(conn)
            .await?;
        record_batch(
            conn,
            &actor,
            vec![(
                "ai_assistant.conversations.import",
                entry(&row, "Import AI conversation"),
            )],
        )
        .await?;
        Ok(json!({
            "conversation": summary(row, ctx),
            "importedMessageCount": imported,
            "skippedMessageCount": skipped,
        }))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(micros: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + time::Duration::microseconds(micros)
    }

    #[test]
    fn a_page_ends_between_milliseconds() {
        // Newest first: 3.2 ms, 2.9, 2.5, 2.1, 0.9.
        let rows = [3_200, 2_900, 2_500, 2_100, 900].map(at).to_vec();
        let mut page = rows.clone();
        page.truncate(3);
        assert!(matches!(
            cut_at_millisecond(&mut page, 2, |t| *t),
            Cut::Done
        ));
        assert_eq!(
            page,
            [at(3_200)],
            "the 2 ms row after the page: 2.9 goes too"
        );
        let mut page = rows[1..4].to_vec();
        let cut = cut_at_millisecond(&mut page, 2, |t| *t);
        assert!(matches!(cut, Cut::WholeMillisecond(t) if t == at(2_000)));
        let mut page = rows[3..].to_vec();
        assert!(matches!(
            cut_at_millisecond(&mut page, 2, |t| *t),
            Cut::Done
        ));
        assert_eq!(page.len(), 2, "no row after the page: nothing to cut");
    }
}
