//! The write path of the audit log: undo and redo. Each function decides how
//! far the caller reaches (its own actions, or the tenant's with the
//! `*_tenant` feature), opens the transaction and runs the registry's
//! handler in it; the handlers only parse the request and shape the answer.

use std::sync::Arc;

use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{CommandRegistry, RedoOutcome, UndoOutcome};
use stoa_core::db::Db;
use uuid::Uuid;

/// Undoes the action of `token` in its own transaction.
pub async fn undo(
    db: &Db,
    registry: Arc<CommandRegistry>,
    ctx: &AuthContext,
    token: String,
) -> Result<UndoOutcome, AppError> {
    let tenant_wide = ctx.has("audit_logs.undo_tenant");
    let actor = ctx.actor();
    db.transaction::<_, AppError, _>(|conn| {
        Box::pin(async move { registry.undo(conn, &actor, &token, tenant_wide).await })
    })
    .await
}

/// Redoes the undone action `log_id` in its own transaction.
pub async fn redo(
    db: &Db,
    registry: Arc<CommandRegistry>,
    ctx: &AuthContext,
    log_id: Uuid,
) -> Result<RedoOutcome, AppError> {
    let tenant_wide = ctx.has("audit_logs.redo_tenant");
    let actor = ctx.actor();
    db.transaction::<_, AppError, _>(|conn| {
        Box::pin(async move { registry.redo(conn, &actor, log_id, tenant_wide).await })
    })
    .await
}
