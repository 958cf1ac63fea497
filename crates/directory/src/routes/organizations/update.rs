//! `PUT /directory/organizations`: a partial update.

use actix_web::{HttpResponse, put, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Json};

use super::MANAGE;
use crate::dto::*;
use crate::routes::with_operation;
use crate::service;

/// Updates an organization; omitted fields keep their stored values.
#[utoipa::path(
    tag = "Directory",
    request_body = UpdateOrganization,
    responses(
        (status = 200, body = Ok),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/directory/organizations")]
pub async fn update_organization(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<UpdateOrganization>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let body = body.into_inner();
    body.check().map_err(AppError::bad_request)?;
    let tenant = ctx.tenant()?;
    let op = service::organizations::update(&db, &ctx, tenant, body).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok::yes()))
}
