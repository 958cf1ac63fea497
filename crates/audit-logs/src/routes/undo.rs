//! `POST /audit_logs/audit-logs/actions/undo`.

use actix_web::{post, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::command::CommandRegistry;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;

use super::parse_body;
use crate::dto::{UndoRequest, UndoResponse};
use crate::error::AuditLogError;
use crate::service;

/// Undoes the caller's latest undoable action (`undoToken` from `x-om-operation`
/// or the action log).
#[utoipa::path(
    tag = "Audit Logs",
    request_body = UndoRequest,
    responses(
        (status = 200, body = UndoResponse),
        (status = 400, body = ErrorBody, description = "Invalid or unavailable token; `entry_pruned` when the audit-log retention removed the entry"),
        (status = 403, body = ErrorBody, description = "The caller may not write the restored state now (features, grant boundary, organization scope, tenant)"),
        (status = 409, body = ErrorBody, description = "The record changed since the action (`changed_since`)"),
        (status = 422, body = ErrorBody, description = "A write guard refused the undo (`guard_refused`, naming the guard), or an interceptor did (it may choose another status and body)"),
    )
)]
#[post("/audit_logs/audit-logs/actions/undo")]
pub async fn undo(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<CommandRegistry>,
    body: web::Bytes,
) -> AppResult<web::Json<UndoResponse>> {
    ctx.require("audit_logs.undo_self")?;
    let req: UndoRequest = parse_body(&body, || AuditLogError::InvalidUndoToken)?;
    let token = req
        .undo_token
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .ok_or(AuditLogError::InvalidUndoToken)?;
    let outcome = service::undo(&db, registry.into_inner(), &ctx, token).await?;
    Ok(web::Json(UndoResponse {
        ok: true,
        log_id: outcome.log_id,
        not_restored: outcome.not_restored,
    }))
}
