//! `DELETE /directory/organizations` (`?id=` or a JSON body `{id}`): a soft
//! delete.

use actix_web::{HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::collection::CollectionId;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;

use super::MANAGE;
use crate::dto::*;
use crate::routes::{delete_target, with_operation};
use crate::service;

/// Soft-deletes an organization; its children move to its parent.
#[utoipa::path(
    tag = "Directory",
    params(IdQuery),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id may come in a JSON body `{id}` instead of the query (as Open Mercato clients send it)"),
    responses(
        (status = 200, body = Ok),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/directory/organizations")]
pub async fn delete_organization(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: CollectionId,
) -> AppResult<HttpResponse> {
    let (tenant, id) = delete_target(&ctx, &id, |ctx| {
        ctx.require(MANAGE)?;
        ctx.tenant()
    })?;
    let op = service::organizations::delete(&db, &ctx, tenant, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok::yes()))
}
