//! `GET /directory/tenants`: filtered, sorted and paged.

use actix_web::{HttpRequest, HttpResponse, get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::http::read_cache::{ReadDeps, ReadLog, answer_json};
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::{AppResult, PageQuery, Query};

use super::VIEW;
use crate::dto::*;
use crate::model::TenantRow;
use crate::queries::TENANTS_READ_DEPS;
use crate::routes::require_super_admin;
use crate::service::PgDirectory;

/// Lists tenants (super admins with `directory.tenants.view`).
// The answer is kept for the session (`stoa_core::http::read_cache`): the
// same page again is one statement, its access-log entry written behind it.
#[utoipa::path(
    tag = "Directory",
    params(TenantListQuery, ListParams),
    responses(
        (status = 200, body = TenantList),
    )
)]
#[get("/directory/tenants")]
pub async fn list_tenants(
    http: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<TenantListQuery>,
    params: Query<ListParams>,
) -> AppResult<HttpResponse> {
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
    let (rows, counted, versions) = PgDirectory
        .list_tenants_as_superadmin(&mut conn, &q, &req, (&actor, FIELDS, PATH))
        .await?;
    let page = req.finish(rows, counted, |row| key_of(row, sort));
    // What each later use of the kept answer logs again.
    let log = ReadLog {
        actor,
        resource_kind: "directory.tenant",
        ids: page.items.iter().map(|t| t.id.to_string()).collect(),
        by_id: q.id.is_some(),
        fields: FIELDS,
        path: PATH,
    };
    let list = TenantList {
        page: page.map(TenantItem::from),
    };
    answer_json(
        &http,
        ctx.read_owner(),
        &list,
        ReadDeps::new(TENANTS_READ_DEPS, None),
        versions,
        Some(log),
    )
}

/// The path the access log records.
const PATH: &str = "/api/directory/tenants";

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
