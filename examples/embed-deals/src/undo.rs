//! `POST /api/embed/undo`: undoes the caller's own action of an undo token
//! (`x-om-operation` of a write, or an action-log entry of a bulk job).
//!
//! stoa serves undo from stoa-audit-logs; this program serves the same
//! command bus call itself (`CommandRegistry::undo`, stoa-core), over the
//! customers handlers only. The handlers check the restored state as any
//! write of the caller.

use actix_web::{post, web};
use serde::{Deserialize, Serialize};
use stoa_acl::AuthContext;
use stoa_core::command::CommandRegistry;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Json};
use utoipa::ToSchema;
use uuid::Uuid;
use validator::Validate;

#[derive(Debug, Deserialize, ToSchema, Validate)]
#[serde(rename_all = "camelCase")]
pub struct UndoRequest {
    #[validate(length(min = 1, max = 200))]
    pub undo_token: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Undone {
    pub ok: bool,
    /// The action-log entry undone.
    pub log_id: Uuid,
}

/// Undoes the caller's action of `undoToken` (its own actions only).
#[utoipa::path(
    tag = "Embed",
    request_body = UndoRequest,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = Undone),
        (status = 400, body = ErrorBody, description = "Invalid or unavailable token"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "The caller may not write the restored state now"),
        (status = 409, body = ErrorBody, description = "The record changed since the action"),
    )
)]
#[post("/embed/undo")]
pub async fn undo(
    ctx: AuthContext,
    db: web::Data<Db>,
    commands: web::Data<CommandRegistry>,
    body: Json<UndoRequest>,
) -> AppResult<web::Json<Undone>> {
    let token = body.into_inner().undo_token;
    let commands = commands.into_inner();
    let actor = ctx.actor();
    let outcome = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move { commands.undo(conn, &actor, &token, false).await })
        })
        .await?;
    Ok(web::Json(Undone {
        ok: true,
        log_id: outcome.log_id,
    }))
}
