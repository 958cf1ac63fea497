//! `POST /directory/tenants`: creates and provisions a tenant.

use actix_web::{HttpResponse, post, web};
use stoa_acl::{AuthContext, Registry};
use stoa_core::db::Db;
use stoa_core::{AppResult, Json};

use super::MANAGE;
use crate::dto::*;
use crate::routes::require_super_admin;
use crate::service;

/// Creates a tenant, provisioned like `stoa init`: a root organization of the
/// same name, the default roles with every module's default grants, and every
/// module's seed data.
#[utoipa::path(
    tag = "Directory",
    request_body = CreateTenant,
    responses(
        (status = 201, body = Created),
    )
)]
#[post("/directory/tenants")]
pub async fn create_tenant(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: Option<web::Data<Registry>>,
    body: Json<CreateTenant>,
) -> AppResult<HttpResponse> {
    require_super_admin(&ctx, MANAGE)?;
    // The registry (registered by stoa-auth) names every module's seeders;
    // without it the tenant gets its root organization only.
    let registry = registry.map(|r| r.into_inner()).unwrap_or_default();
    let id = service::tenants::create(&db, &ctx, body.into_inner(), registry).await?;
    Ok(HttpResponse::Created().json(Created { id }))
}
