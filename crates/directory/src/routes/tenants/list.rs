//! `GET /directory/tenants`: filtered, sorted and paged.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::pagination::total_pages;
use stoa_core::{AppResult, PageQuery, Query};

use super::VIEW;
use crate::dto::*;
use crate::routes::require_super_admin;
use crate::service::PgDirectory;

/// Lists tenants (super admins with `directory.tenants.view`).
#[utoipa::path(
    tag = "Directory",
    params(TenantListQuery),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = TenantList),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[get("/directory/tenants")]
pub async fn list_tenants(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<TenantListQuery>,
) -> AppResult<web::Json<TenantList>> {
    require_super_admin(&ctx, VIEW)?;
    let page = PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(50, 100)?;
    let mut conn = db.conn().await?;
    let (rows, total) = PgDirectory
        .list_tenants_as_superadmin(&mut conn, &q, page)
        .await?;
    let total = u64::try_from(total).unwrap_or(0);
    let ids: Vec<String> = rows.iter().map(|r| r.id.to_string()).collect();
    stoa_core::command::access::record(
        &mut conn,
        &ctx.actor(),
        "directory.tenant",
        &ids,
        q.id.is_some(),
        &["id", "name", "isActive", "createdAt", "updatedAt"],
        Some(serde_json::json!({"resultCount": ids.len(), "path": "/api/directory/tenants"})),
    )
    .await?;
    Ok(web::Json(TenantList {
        items: rows.into_iter().map(TenantItem::from).collect(),
        total,
        page: page.page,
        page_size: page.page_size,
        total_pages: total_pages(total, page.page_size),
    }))
}
