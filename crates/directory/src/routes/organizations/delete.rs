//! `DELETE /directory/organizations` (`?id=` or a JSON body `{id}`): a soft
//! delete.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::collection::CollectionId;
use stoa_core::command;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};

use super::MANAGE;
use crate::commands::DeleteOrganizationCommand;
use crate::dto::*;
use crate::routes::with_operation;

/// Soft-deletes an organization; its children move to its parent.
#[utoipa::path(
    tag = "Directory",
    params(IdQuery),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id may come in a JSON body `{id}` instead of the query (as Open Mercato clients send it)"),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/directory/organizations")]
pub async fn delete_organization(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: CollectionId,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let tenant = ctx.tenant()?;
    let id = id.uuid()?;
    if !ctx.can_see_organization(id) && !ctx.is_super_admin() {
        return Err(AppError::new(StatusCode::NOT_FOUND, "Not found"));
    }
    let actor = ctx.actor();
    let (_, op) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                command::execute(conn, &actor, DeleteOrganizationCommand { tenant, id }).await
            })
        })
        .await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok::yes()))
}
