//! Deleting a key: the caller's scope and the transaction that runs the
//! command.

use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::db::Db;
use uuid::Uuid;

use crate::commands::DeleteKeyCommand;
use crate::error::ApiKeysError;

/// Soft-deletes the key `id` of the caller's tenant and organization scope
/// (and the keys created through it) in its own transaction. A key outside
/// the scope answers 404 like an unknown one.
pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> Result<(), AppError> {
    let tenant_id = ctx.tenant_id.ok_or(ApiKeysError::TenantRequired)?;
    let command = DeleteKeyCommand {
        tenant_id,
        id,
        organizations: if ctx.is_super_admin() {
            None
        } else {
            ctx.acl.visible_organization_ids.clone()
        },
    };
    let actor = ctx.actor();
    db.transaction::<_, AppError, _>(|conn| {
        Box::pin(async move { stoa_core::command::execute(conn, &actor, command).await })
    })
    .await?;
    Ok(())
}
