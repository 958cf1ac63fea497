//! `/directory/tenants` (super admins): one handler per file, and the
//! transaction the write handlers share.

pub mod create;
pub mod delete;
pub mod list;
pub mod update;

use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::db::Db;

use crate::commands::TenantCommand;

const VIEW: &str = "directory.tenants.view";
const MANAGE: &str = "directory.tenants.manage";

/// Runs a tenant command in its own transaction (logged, not undoable).
async fn run(ctx: &AuthContext, db: &Db, command: TenantCommand) -> AppResult<uuid::Uuid> {
    let actor = ctx.actor();
    let (id, _) = db
        .transaction::<_, stoa_core::AppError, _>(|conn| {
            Box::pin(async move { stoa_core::command::execute(conn, &actor, command).await })
        })
        .await?;
    Ok(id)
}
