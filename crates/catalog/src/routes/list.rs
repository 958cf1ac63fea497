//! `GET /catalog/products`: the caller's products, with search, filters,
//! sorting and keyset paging.

use actix_web::{HttpRequest, HttpResponse, get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::read_cache::answer_json;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Query};

use crate::dto::{ProductList, ProductListQuery};
use crate::service;

// The page and its capped total come in one statement. A session caller's
// answer is kept until a product of its tenant (or its grants) change: a
// repeated read is then the session check alone.
/// Lists the products of the caller's tenant inside its organizations: the
/// page and its (capped) total. `nextCursor`, sent back as `cursor` with the
/// same filters and sort, continues after the page.
#[utoipa::path(
    tag = "Catalog",
    params(ProductListQuery, ListParams),
    responses(
        (status = 200, body = ProductList),
        (status = 400, body = ErrorBody, description = "Invalid paging, filter, sort or cursor"),
        (status = 401, body = ErrorBody, description = "Not signed in"),
        (status = 403, body = ErrorBody, description = "Missing `catalog.products.view`, or no tenant"),
    )
)]
#[get("/catalog/products")]
pub async fn list_products(
    req: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<ProductListQuery>,
    params: Query<ListParams>,
) -> AppResult<HttpResponse> {
    let (list, deps, versions) = service::list_products(&db, &ctx, &q, &params).await?;
    // Product lists carry no personal data: not access-logged.
    answer_json(&req, ctx.read_owner(), &list, deps, versions, None)
}
