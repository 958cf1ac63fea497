//! `GET /directory/tenants`: filtered, sorted and paged.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::{AppResult, PageQuery, Query};

use super::VIEW;
use crate::dto::*;
use crate::model::TenantRow;
use crate::routes::require_super_admin;
use crate::service::PgDirectory;

/// Lists tenants (super admins with `directory.tenants.view`).
#[utoipa::path(
    tag = "Directory",
    params(TenantListQuery, ListParams),
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
    params: Query<ListParams>,
) -> AppResult<web::Json<TenantList>> {
    require_super_admin(&ctx, VIEW)?;
    let page = PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(50, 100)?;
    let sort = q.sort_field.unwrap_or_default();
    let req = ListRequest::new(
        page,
        &params,
        sort.cursor_tag(q.sort_dir.unwrap_or(SortDir::Asc)),
    )?;
    let mut conn = db.conn().await?;
    let actor = ctx.actor();
    let (rows, counted) = PgDirectory
        .list_tenants_as_superadmin(
            &mut conn,
            &q,
            &req,
            (&actor, FIELDS, "/api/directory/tenants"),
        )
        .await?;
    let page = req.finish(rows, counted, |row| key_of(row, sort));
    Ok(web::Json(TenantList {
        items: page.items.into_iter().map(TenantItem::from).collect(),
        total: page.total,
        page: page.page,
        page_size: page.page_size,
        total_pages: page.total_pages,
        total_capped: page.total_capped,
        next_cursor: page.next_cursor,
    }))
}

/// The fields of a listed tenant (the access log's `fields`).
const FIELDS: &[&str] = &["id", "name", "isActive", "createdAt", "updatedAt"];

fn key_of(row: &TenantRow, sort: TenantSortField) -> TenantKey {
    let micros = |at: time::OffsetDateTime| {
        i64::try_from(at.unix_timestamp_nanos() / 1_000).unwrap_or(i64::MAX)
    };
    match sort {
        TenantSortField::Name => TenantKey::Name(row.name.clone(), row.id),
        TenantSortField::CreatedAt => TenantKey::At(micros(row.created_at), row.id),
        TenantSortField::UpdatedAt => TenantKey::At(micros(row.updated_at), row.id),
    }
}
