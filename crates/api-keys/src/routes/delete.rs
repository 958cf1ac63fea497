//! `DELETE /api_keys/keys`: soft-deletes a key and the keys made through it.

use actix_web::{delete, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Query};
use uuid::Uuid;

use crate::error::ApiKeysError;
use crate::model::*;
use crate::service;

use super::*;

/// Soft-deletes a key of the caller's tenant and scope (and the keys created
/// through it). Unknown, foreign and out-of-scope keys all answer 404.
#[utoipa::path(
    tag = "API Keys",
    params(ApiKeyIdQuery),
    responses(
        (status = 200, body = ApiKeyDeleted),
        (status = 400, body = ErrorBody, description = "Missing or malformed id, no tenant context"),
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
    service::delete(&db, &ctx, id).await?;
    Ok(web::Json(ApiKeyDeleted { success: true }))
}
