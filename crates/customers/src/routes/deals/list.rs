//! `GET /customers/deals`: one page of deals.

use actix_web::{HttpRequest, HttpResponse, get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::read_cache::answer_json;
use stoa_core::list::ListParams;
use stoa_core::pagination::PageQuery;
use stoa_core::{AppResult, Query};

use crate::DEALS_VIEW;
use crate::dto::{DealList, DealListQuery};
use crate::queries::deal_list::{ListScope, list};
use crate::service::visible;

/// The deals of the caller's tenant in the organizations it sees, newest
/// first by default: the page, its total (capped, see `includeTotal`) and
/// `nextCursor`.
// A session's answer is kept (`stoa_core::http::read_cache`): the same page
// again is the session check alone while no deal of the tenant changed.
#[utoipa::path(
    tag = "Customers",
    params(PageQuery, ListParams, DealListQuery),
    responses(
        (status = 200, body = DealList),
        (status = 400, body = ErrorBody, description = "A malformed filter, page or cursor"),
    )
)]
#[get("/customers/deals")]
pub async fn list_deals(
    http: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    page: Query<PageQuery>,
    params: Query<ListParams>,
    q: Query<DealListQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(DEALS_VIEW)?;
    let page = page.resolve(50, 100)?;
    let scope = ListScope {
        tenant_id: ctx.tenant()?,
        organizations: visible(&ctx),
    };
    let mut conn = db.conn().await?;
    let (list, deps, versions) = list(&mut conn, &scope, &q, page, &params).await?;
    answer_json(&http, ctx.read_owner(), &list, deps, versions, None)
}
