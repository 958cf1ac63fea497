//! `GET /directory/organizations/lookup` (public).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, get, web};
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Query};

use super::limit;
use crate::dto::*;
use crate::service::PgDirectory;

/// Resolves an organization slug (the oldest match across tenants).
#[utoipa::path(
    tag = "Directory",
    params(OrganizationLookupQuery),
    responses(
        (status = 200, body = OrganizationLookup),
        (status = 404, body = ErrorBody),
        (status = 429, body = ErrorBody),
    )
)]
#[get("/directory/organizations/lookup")]
pub async fn lookup_organization(
    req: HttpRequest,
    db: web::Data<Db>,
    q: Query<OrganizationLookupQuery>,
) -> AppResult<web::Json<OrganizationLookup>> {
    // No caller yet: the lookup spans tenants (an audited bypass, `stoa_core::rls`).
    stoa_core::rls::set_request_scope(stoa_core::rls::bypass_scope("public organization lookup"));
    limit(&req, "organization")?;
    let slug = q.slug.as_deref().unwrap_or("").trim().to_lowercase();
    if slug.is_empty() || slug.len() > 150 {
        return Err(AppError::bad_request("Invalid slug.").ok_false());
    }
    let mut conn = db.conn().await?;
    let organization = PgDirectory
        .lookup_organization(&mut conn, &slug)
        .await?
        .ok_or_else(|| {
            AppError::new(StatusCode::NOT_FOUND, "Organization not found.").ok_false()
        })?;
    Ok(web::Json(OrganizationLookup {
        ok: true,
        organization,
    }))
}
