//! `DELETE /api_keys/keys`: soft-deletes a key and the keys made through it.

use actix_web::{delete, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Query};
use uuid::Uuid;

use crate::commands::DeleteKeyCommand;
use crate::error::ApiKeysError;
use crate::model::*;

use super::*;

/// Soft-deletes a key of the caller's tenant and scope (and the keys created
/// through it). Unknown, foreign and out-of-scope keys all answer 404.
#[utoipa::path(
    tag = "API Keys",
    params(ApiKeyIdQuery),
    security(("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 200, body = ApiKeyDeleted),
        (status = 400, body = ErrorBody, description = "Missing or malformed id, no tenant context"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/api_keys/keys")]
pub async fn delete_key(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<ApiKeyIdQuery>,
) -> AppResult<web::Json<ApiKeyDeleted>> {
    ctx.require(DELETE)?;
    let id: Uuid =
        q.id.as_deref()
            .map(str::trim)
            .and_then(|s| s.parse().ok())
            .ok_or(ApiKeysError::IdRequired)?;
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
    Ok(web::Json(ApiKeyDeleted { success: true }))
}
