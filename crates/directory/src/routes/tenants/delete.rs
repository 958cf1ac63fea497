//! `DELETE /directory/tenants` (`?id=` or a JSON body `{id}`): a soft delete.

use actix_web::{delete, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::collection::CollectionId;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;

use super::MANAGE;
use crate::dto::*;
use crate::routes::{delete_target, require_super_admin};
use crate::service;

/// Soft-deletes a tenant.
#[utoipa::path(
    tag = "Directory",
    params(IdQuery),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id may come in a JSON body `{id}` instead of the query (as Open Mercato clients send it)"),
    responses(
        (status = 200, body = Ok),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/directory/tenants")]
pub async fn delete_tenant(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: CollectionId,
) -> AppResult<web::Json<Ok>> {
    let ((), id) = delete_target(&ctx, &id, |ctx| require_super_admin(ctx, MANAGE))?;
    service::tenants::delete(&db, &ctx, id).await?;
    Ok(web::Json(Ok::yes()))
}
