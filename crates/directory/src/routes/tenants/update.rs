//! `PUT /directory/tenants`: a partial update.

use actix_web::{put, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::MANAGE;
use crate::dto::*;
use crate::routes::require_super_admin;
use crate::service;

/// Updates a tenant's name or active flag; omitted fields keep their values.
#[utoipa::path(
    tag = "Directory",
    request_body = UpdateTenant,
    responses(
        (status = 200, body = Ok),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/directory/tenants")]
pub async fn update_tenant(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<UpdateTenant>,
) -> AppResult<web::Json<Ok>> {
    require_super_admin(&ctx, MANAGE)?;
    service::tenants::update(&db, &ctx, body.into_inner()).await?;
    Ok(web::Json(Ok::yes()))
}
