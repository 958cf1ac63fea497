//! `/ai_assistant/ai/conversations/{conversationId}/participants` (list,
//! share) and `.../participants/{userId}` (revoke).

use actix_web::{HttpResponse, delete, get, post, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use uuid::Uuid;

use crate::extract::{Json, Path};
use crate::participants::{self, AddParticipant, Added, Participants};
use crate::state::AiState;
use crate::{CONVERSATIONS_SHARE, VIEW};

/// The conversation's active participants, its owner included (the owner
/// or `ai_assistant.conversations.manage` only).
#[utoipa::path(tag = "AI Assistant", params(("conversationId" = String, Path)),
    responses((status = 200, body = Participants),
        (status = 403, body = ErrorBody, description = "`forbidden`: not the owner nor a manager"),
        (status = 404, body = ErrorBody, description = "`conversation_not_found`")))]
#[get("/ai_assistant/ai/conversations/{conversationId}/participants")]
pub async fn list_participants(
    ctx: AuthContext,
    db: web::Data<Db>,
    key: Path<String>,
) -> AppResult<web::Json<Participants>> {
    ctx.require(VIEW)?;
    let mut conn = db.conn().await?;
    Ok(web::Json(
        participants::list(&mut conn, &ctx, &key.into_inner()).await?,
    ))
}

/// Shares the caller's conversation with a user of the same tenant, as a
/// viewer (`ai_assistant.conversation.shared`; visibility becomes `shared`).
#[utoipa::path(tag = "AI Assistant", params(("conversationId" = String, Path)), request_body = AddParticipant,
    responses((status = 201, body = Added),
        (status = 400, body = ErrorBody, description = "Validation, `self_share_not_allowed`, `user_not_found`"),
        (status = 404, body = ErrorBody, description = "`conversation_not_found`: missing or not the caller's"),
        (status = 409, body = ErrorBody, description = "`duplicate_participant`")))]
#[post("/ai_assistant/ai/conversations/{conversationId}/participants")]
pub async fn add_participant(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    key: Path<String>,
    body: Json<AddParticipant>,
) -> AppResult<HttpResponse> {
    ctx.require_all(&[VIEW, CONVERSATIONS_SHARE])?;
    let participant =
        participants::add(&db, &state, &ctx, &key.into_inner(), body.into_inner()).await?;
    Ok(HttpResponse::Created().json(Added { participant }))
}

/// Revokes a participant (`ai_assistant.conversation.unshared`; the last
/// one gone makes the conversation `private`).
#[utoipa::path(tag = "AI Assistant", params(("conversationId" = String, Path), ("userId" = String, Path, format = Uuid)),
    responses((status = 204, description = "Revoked"),
        (status = 403, body = ErrorBody, description = "`forbidden`: not the owner nor a manager, the owner's row, or no such conversation"),
        (status = 404, body = ErrorBody, description = "`participant_not_found`")))]
#[delete("/ai_assistant/ai/conversations/{conversationId}/participants/{userId}")]
pub async fn remove_participant(
    ctx: AuthContext,
    db: web::Data<Db>,
    path: Path<(String, Uuid)>,
) -> AppResult<HttpResponse> {
    ctx.require_all(&[VIEW, CONVERSATIONS_SHARE])?;
    let (key, user) = path.into_inner();
    participants::remove(&db, &ctx, &key, user).await?;
    Ok(HttpResponse::NoContent().finish())
}
