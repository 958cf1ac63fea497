//! `POST /directory/organizations`.

use actix_web::{HttpResponse, post, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::MANAGE;
use crate::dto::*;
use crate::routes::with_operation;
use crate::service;

/// Creates an organization (slug defaults to the name; collisions get `-1`, `-2`, ...).
#[utoipa::path(
    tag = "Directory",
    request_body = CreateOrganization,
    responses(
        (status = 201, body = Created),
        (status = 404, body = ErrorBody, description = "Tenant not found (a `tenantId` a super admin names that does not exist)"),
    )
)]
#[post("/directory/organizations")]
pub async fn create_organization(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<CreateOrganization>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let (id, op) = service::organizations::create(&db, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(Created { id }))
}
