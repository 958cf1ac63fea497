//! `/ai_assistant/ai/conversations` (list, create, import) and
//! `/ai_assistant/ai/conversations/{conversationId}` (get, patch, delete).

use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::Deserialize;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::read_cache::answer_json;
use stoa_core::list::TotalMode;
use stoa_core::{AppError, AppResult};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use utoipa::IntoParams;
use validator::Validate;

use crate::VIEW;
use crate::conversations::{
    self, CreateConversation, ImportConversation, PatchConversation, Summary,
};
use crate::error::AiError;
use crate::extract::{Json, Path, Query};
use crate::state::AiState;

fn instant(raw: Option<&str>, name: &str) -> Result<Option<OffsetDateTime>, AppError> {
    match raw.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => OffsetDateTime::parse(s, &Rfc3339)
            .map(Some)
            .map_err(|_| AiError::Validation(format!("{name} must be an ISO timestamp")).into()),
    }
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    pub agent: Option<String>,
    /// `open` or `closed`.
    pub status: Option<String>,
    /// `nextCursor` of the previous page (an ISO timestamp).
    pub cursor: Option<String>,
    /// 1-100 (default 50).
    #[validate(range(min = 1, max = 100))]
    pub limit: Option<i64>,
    /// Omitted: `total` is exact up to 1,000 rows past the cursor
    /// (`totalCapped: true` beyond); `true`: exact; `false`: not counted.
    #[serde(rename = "includeTotal")]
    pub include_total: Option<String>,
}

/// The caller's conversations (every one of the organization with
/// `ai_assistant.conversations.manage`), newest activity first.
#[utoipa::path(tag = "AI Assistant", params(ListQuery),
    responses((status = 200, body = Object, description = "`{items, nextCursor, total, totalCapped}`; `total` counts from the cursor on"),
        (status = 403, body = ErrorBody)))]
#[get("/ai_assistant/ai/conversations")]
pub async fn list_conversations(
    http: actix_web::HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<ListQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let q = q.into_inner();
    let cursor = instant(q.cursor.as_deref(), "cursor")?;
    let total = TotalMode::parse(q.include_total.as_deref());
    let mut conn = db.conn().await?;
    let listed = conversations::list(
        &mut conn,
        &ctx,
        q.agent.as_deref(),
        q.status.as_deref(),
        cursor,
        q.limit.unwrap_or(50),
        total,
    )
    .await?;
    // A session's answer is kept (stoa_core::http::read_cache): the same
    // page again is one statement while no conversation of the tenant moved.
    answer_json(
        &http,
        ctx.read_owner(),
        &listed.page,
        listed.deps,
        listed.versions,
        None,
    )
}

/// 400 `validation_error` unless `id` names an agent of the registry (a
/// conversation is always some agent's).
fn known_agent(state: &AiState, id: &str, field: &str) -> Result<(), AppError> {
    if state.agent(id.trim()).is_some() {
        return Ok(());
    }
    Err(AppError::bad_request(format!("Unknown agent \"{id}\""))
        .with_code(crate::extract::VALIDATION_ERROR)
        .with_issues(vec![stoa_core::error::Issue {
            path: field.split('.').map(|p| Value::String(p.into())).collect(),
            message: format!("Unknown agent \"{id}\""),
            code: "custom".into(),
        }]))
}

/// Creates a conversation (201), or returns the caller's existing one of
/// that `conversationId` (200).
#[utoipa::path(tag = "AI Assistant", request_body = CreateConversation,
    responses((status = 201, body = Summary), (status = 200, body = Summary, description = "Already there"),
        (status = 400, body = ErrorBody, description = "Validation (incl. an unknown `agentId`), `tenant_required`, `organization_not_found` (the selected organization is deleted or inactive)"),
        (status = 404, body = ErrorBody, description = "Another user's conversation of that id")))]
#[post("/ai_assistant/ai/conversations")]
pub async fn create_conversation(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    body: Json<CreateConversation>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let body = body.into_inner();
    known_agent(&state, &body.agent_id, "agentId")?;
    conversations::require_active_organization(&mut *db.conn().await?, &state, &ctx).await?;
    let (summary, created) = conversations::create(&db, &ctx, body, false).await?;
    Ok(if created {
        HttpResponse::Created().json(summary)
    } else {
        HttpResponse::Ok().json(summary)
    })
}

/// Imports a browser-local conversation (at most 100 messages).
#[utoipa::path(tag = "AI Assistant", request_body = ImportConversation,
    responses((status = 200, body = Object, description = "`{conversation, importedMessageCount, skippedMessageCount}`"),
        (status = 400, body = ErrorBody, description = "Validation (incl. an unknown `conversation.agentId`), `tenant_required`, `organization_not_found`"), (status = 403, body = ErrorBody)))]
#[post("/ai_assistant/ai/conversations/import")]
pub async fn import_conversation(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    body: Json<ImportConversation>,
) -> AppResult<web::Json<Value>> {
    ctx.require(VIEW)?;
    let body = body.into_inner();
    known_agent(&state, &body.conversation.agent_id, "conversation.agentId")?;
    conversations::require_active_organization(&mut *db.conn().await?, &state, &ctx).await?;
    Ok(web::Json(conversations::import(&db, &ctx, body).await?))
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MessagesQuery {
    /// Older messages than this ISO timestamp.
    pub before: Option<String>,
    /// 1-200 (default 100).
    #[validate(range(min = 1, max = 200))]
    pub limit: Option<i64>,
}

/// One conversation and a page of its messages (ascending).
#[utoipa::path(tag = "AI Assistant", params(("conversationId" = String, Path), MessagesQuery),
    responses((status = 200, body = Object, description = "`{conversation, messages, nextCursor}`"),
        (status = 404, body = ErrorBody)))]
#[get("/ai_assistant/ai/conversations/{conversationId}")]
pub async fn get_conversation(
    ctx: AuthContext,
    db: web::Data<Db>,
    key: Path<String>,
    q: Query<MessagesQuery>,
) -> AppResult<web::Json<Value>> {
    ctx.require(VIEW)?;
    let q = q.into_inner();
    let before = instant(q.before.as_deref(), "before")?;
    let mut conn = db.conn().await?;
    Ok(web::Json(
        conversations::get(
            &mut conn,
            &ctx,
            &key.into_inner(),
            before,
            q.limit.unwrap_or(100),
        )
        .await?,
    ))
}

/// Changes the title, status or page context.
#[utoipa::path(tag = "AI Assistant", params(("conversationId" = String, Path)), request_body = PatchConversation,
    responses((status = 200, body = Summary),
        (status = 404, body = ErrorBody)))]
#[patch("/ai_assistant/ai/conversations/{conversationId}")]
pub async fn patch_conversation(
    ctx: AuthContext,
    db: web::Data<Db>,
    key: Path<String>,
    body: Json<PatchConversation>,
) -> AppResult<web::Json<Summary>> {
    ctx.require(VIEW)?;
    Ok(web::Json(
        conversations::patch(&db, &ctx, &key.into_inner(), body.into_inner()).await?,
    ))
}

/// Soft-deletes the conversation and its messages.
#[utoipa::path(tag = "AI Assistant", params(("conversationId" = String, Path)),
    responses((status = 200, body = Object, description = "`{ok:true}`"),
        (status = 404, body = ErrorBody)))]
#[delete("/ai_assistant/ai/conversations/{conversationId}")]
pub async fn delete_conversation(
    ctx: AuthContext,
    db: web::Data<Db>,
    key: Path<String>,
) -> AppResult<web::Json<Value>> {
    ctx.require(VIEW)?;
    conversations::delete(&db, &ctx, &key.into_inner()).await?;
    Ok(web::Json(json!({"ok": true})))
}
