//! `GET /directory/tenants/lookup` (public).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, get, web};
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Query};
use uuid::Uuid;

use super::limit;
use crate::dto::*;
use crate::service::{DirectoryService, PgDirectory};

/// Resolves a tenant id to its name (for login pages).
#[utoipa::path(
    tag = "Directory",
    params(TenantLookupQuery),
    responses(
        (status = 200, body = TenantLookup),
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
    // No caller yet: the lookup spans tenants (an audited bypass, `stoa_core::rls`).
    stoa_core::rls::set_request_scope(stoa_core::rls::bypass_scope("public tenant lookup"));
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
