//! Deleting a key: the resource kit's delete in its own transaction.

use futures_util::FutureExt;
use stoa_acl::AuthContext;
use stoa_acl::resource::{self, Write};
use stoa_core::AppError;
use stoa_core::db::Db;
use uuid::Uuid;

use crate::commands::{DELETE, DELETE_LABEL, KeySnapshot};
use crate::error::ApiKeysError;

/// Soft-deletes the key `id` of the caller's tenant and organization scope
/// (and the keys created through it) in its own transaction. A key outside
/// the scope answers 404 like an unknown one (`commands/delete.rs`).
pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> Result<(), AppError> {
    ctx.tenant_id.ok_or(ApiKeysError::TenantRequired)?;
    let ctx = ctx.clone();
    db.transaction::<_, AppError, _>(|conn| {
        Box::pin(async move {
            let how = Write::new(DELETE, DELETE_LABEL);
            resource::update_in::<KeySnapshot, _>(conn, &ctx, None, how, id, None, |_, key| {
                async move {
                    key.deleted = true;
                    Ok(())
                }
                .boxed()
            })
            .await
        })
    })
    .await?;
    Ok(())
}
