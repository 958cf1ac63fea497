//! `POST /api_keys/keys`: a new key, its secret shown once.

use actix_web::{HttpResponse, post, web};
use stoa_acl::{AuthContext, OrganizationDirectory, RoleDirectory};
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use crate::model::*;
use crate::service;

use super::*;

/// Creates a key; the response carries its secret, shown this once. The key
/// can never carry more than its creator holds.
#[utoipa::path(
    tag = "API Keys",
    request_body = CreateApiKey,
    responses(
        (status = 201, body = CreatedApiKey),
        (status = 400, body = ErrorBody, description = "Invalid input, unknown role, past expiry, no tenant context"),
        (status = 403, body = ErrorBody, description = "Missing feature, foreign tenant, organization out of scope, or a role granting more than the caller holds"),
    )
)]
#[post("/api_keys/keys")]
pub async fn create_key(
    ctx: AuthContext,
    db: web::Data<Db>,
    roles: web::Data<dyn RoleDirectory>,
    organizations: web::Data<dyn OrganizationDirectory>,
    body: Json<CreateApiKey>,
) -> AppResult<HttpResponse> {
    ctx.require(CREATE)?;
    let created = service::create(
        &db,
        roles.into_inner(),
        organizations.into_inner(),
        ctx,
        body.into_inner(),
    )
    .await?;
    // The secret is in the body: no browser or proxy may keep a copy.
    Ok(HttpResponse::Created()
        .insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"))
        .json(created))
}
