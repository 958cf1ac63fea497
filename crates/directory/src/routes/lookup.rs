//! Public lookups (no authentication): they reveal only an id, a name and a slug.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, get, web};
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::{TrustedProxyDepth, client_ip};
use stoa_core::rate_limit::{RateLimiter, Rule};
use stoa_core::{AppError, AppResult, Query};
use uuid::Uuid;

use crate::model::*;
use crate::service::{DirectoryService, PgDirectory};

/// 60 lookups per minute per client address, when a limiter is configured.
const LOOKUP_RULE: Rule = Rule::per_minute(60);

fn limit(req: &HttpRequest, what: &str) -> AppResult<()> {
    let Some(limiter) = req.app_data::<web::Data<dyn RateLimiter>>() else {
        return Ok(());
    };
    let depth = req
        .app_data::<web::Data<TrustedProxyDepth>>()
        .map(|d| *d.get_ref())
        .unwrap_or_default();
    match client_ip(req, depth) {
        Some(ip) => limiter
            .record(&format!("directory:{what}:ip:{ip}"), &LOOKUP_RULE)
            .into_result(),
        None => Ok(()),
    }
}

/// Resolves a tenant id to its name (for login pages).
#[utoipa::path(
    tag = "Directory",
    params(TenantLookupQuery),
    responses(
        (status = 200, body = TenantLookup),
        (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 429, body = ErrorBody),
    )
)]
#[get("/directory/tenants/lookup")]
pub async fn lookup_tenant(
    req: HttpRequest,
    db: web::Data<Db>,
    q: Query<TenantLookupQuery>,
) -> AppResult<web::Json<TenantLookup>> {
    limit(&req, "tenant")?;
    let raw = q
        .tenant_id
        .as_deref()
        .or(q.tenant.as_deref())
        .unwrap_or("")
        .trim();
    let id: Uuid = raw
        .parse()
        .map_err(|_| AppError::bad_request("Invalid tenant id.").ok_false())?;
    let mut conn = db.conn().await?;
    let tenant = PgDirectory
        .tenant(&mut conn, id)
        .await?
        .ok_or_else(|| AppError::new(StatusCode::NOT_FOUND, "Tenant not found.").ok_false())?;
    Ok(web::Json(TenantLookup {
        ok: true,
        tenant: TenantRef {
            id: tenant.id,
            name: tenant.name,
        },
    }))
}

/// Resolves an organization slug (the oldest match across tenants).
#[utoipa::path(
    tag = "Directory",
    params(OrganizationLookupQuery),
    responses(
        (status = 200, body = OrganizationLookup),
        (status = 400, body = ErrorBody),
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
