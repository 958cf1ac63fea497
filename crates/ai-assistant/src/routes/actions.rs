//! `GET /ai_assistant/ai/actions/{id}`, `POST .../confirm`, `POST .../cancel`.

use actix_web::{HttpResponse, get, post, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};
use uuid::Uuid;

use crate::VIEW;
use crate::actions::{self, Cancelled, Confirmed, PendingAction};
use crate::dto::{CancelAction, CancelledAction};
use crate::error::AiError;
use crate::extract::{Path, parse_json};
use crate::state::AiState;

fn action_id(raw: &str) -> Result<Uuid, AppError> {
    if raw.is_empty() || raw.len() > 128 {
        return Err(AiError::Validation("Invalid action id".into()).into());
    }
    // A well-formed id that is no uuid names no action.
    raw.parse()
        .map_err(|_| AiError::PendingActionNotFound.into())
}

/// One pending action of the caller's tenant and organization that the
/// caller proposed (anyone else's is 404, as an unknown one).
#[utoipa::path(
    tag = "AI Assistant",
    params(("id" = String, Path, description = "Pending action id")),
    responses(
        (status = 200, body = PendingAction),
        (status = 404, body = ErrorBody, description = "`pending_action_not_found`: unknown, or proposed by someone else"),
    )
)]
#[get("/ai_assistant/ai/actions/{id}")]
pub async fn get_action(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
) -> AppResult<web::Json<PendingAction>> {
    ctx.require(VIEW)?;
    let id = action_id(&id.into_inner())?;
    let mut conn = db.conn().await?;
    Ok(web::Json(
        actions::find(&mut conn, &ctx, id, false).await?.into(),
    ))
}

/// Confirms the caller's own pending action: the tool runs now, as the
/// caller (the grants of this request), through the owning module's service.
#[utoipa::path(
    tag = "AI Assistant",
    params(("id" = String, Path, description = "Pending action id")),
    responses(
        (status = 200, body = Confirmed, description = "Executed (`ok:true`), failed (`ok:false`), or a replay of either"),
        (status = 403, body = ErrorBody, description = "`agent_features_denied`, `tool_not_whitelisted`, `read_only_agent`, `tool_features_denied`"),
        (status = 404, body = ErrorBody, description = "`pending_action_not_found` (unknown, or proposed by someone else), `agent_unknown`"),
        (status = 409, body = ErrorBody, description = "`invalid_status`, `expired`"),
        (status = 412, body = ErrorBody, description = "`stale_version`, `schema_drift`"),
        (status = 500, body = ErrorBody),
    )
)]
#[post("/ai_assistant/ai/actions/{id}/confirm")]
pub async fn confirm_action(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    id: Path<String>,
) -> AppResult<web::Json<Confirmed>> {
    ctx.require(VIEW)?;
    let id = action_id(&id.into_inner())?;
    Ok(web::Json(actions::confirm(&db, &state, &ctx, id).await?))
}

/// Cancels the caller's own pending action (`ai.action.cancelled`, once);
/// anyone else's is 404.
#[utoipa::path(
    tag = "AI Assistant",
    params(("id" = String, Path, description = "Pending action id")),
    request_body(content = Option<CancelAction>),
    responses(
        (status = 200, body = CancelledAction),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "`invalid_status`, or `expired` (with `pendingAction`)"),
    )
)]
#[post("/ai_assistant/ai/actions/{id}/cancel")]
pub async fn cancel_action(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let id = action_id(&id.into_inner())?;
    let input = if body.iter().all(u8::is_ascii_whitespace) {
        CancelAction::default()
    } else if serde_json::from_slice::<serde_json::Value>(&body).is_err() {
        return Err(AiError::Validation("Request body must be valid JSON.".into()).into());
    } else {
        parse_json::<CancelAction>(&body)?
    };
    match actions::cancel(&db, &ctx, id, input.reason).await? {
        Cancelled::Done(row) => Ok(HttpResponse::Ok().json(CancelledAction {
            ok: true,
            pending_action: row.into(),
        })),
        Cancelled::Expired(row) => {
            Err(AppError::from(AiError::Expired)
                .with_field("pendingAction", PendingAction::from(row)))
        }
    }
}
