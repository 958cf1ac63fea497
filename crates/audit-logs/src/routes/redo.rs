//! `POST /audit_logs/audit-logs/actions/redo`.

use actix_web::{HttpResponse, post, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::command::CommandRegistry;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use uuid::Uuid;

use super::parse_body;
use crate::dto::{RedoRequest, RedoResponse};
use crate::error::AuditLogError;
use crate::service;

/// Redoes the caller's most recently undone action.
#[utoipa::path(
    tag = "Audit Logs",
    request_body = RedoRequest,
    responses(
        (status = 200, body = RedoResponse, description = "Redone; `x-om-operation` carries the new undo token"),
        (status = 400, body = ErrorBody, description = "Invalid or unavailable entry; `entry_pruned` when the audit-log retention removed it"),
        (status = 409, body = ErrorBody, description = "The record changed since the action (`changed_since`)"),
        (status = 422, body = ErrorBody, description = "A write guard refused the redo (`guard_refused`, naming the guard)"),
    )
)]
#[post("/audit_logs/audit-logs/actions/redo")]
pub async fn redo(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<CommandRegistry>,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    ctx.require("audit_logs.redo_self")?;
    let req: RedoRequest = parse_body(&body, || AuditLogError::InvalidLogId)?;
    let log_id: Uuid = req
        .log_id
        .as_deref()
        .map(str::trim)
        .and_then(|s| s.parse().ok())
        .ok_or(AuditLogError::InvalidLogId)?;
    let outcome = service::redo(&db, registry.into_inner(), &ctx, log_id).await?;
    let op = outcome.operation;
    Ok(
        stoa_core::command::with_operation(HttpResponse::Ok(), &op).json(RedoResponse {
            ok: true,
            log_id: Some(op.id),
            undo_token: op.undo_token,
        }),
    )
}
