//! `GET /catalog/products`: the caller's products, with search, filters,
//! sorting and keyset paging.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Query};

use crate::dto::{ProductList, ProductListQuery};
use crate::service;

/// Lists the products of the caller's tenant inside its organizations: the
/// page and its (capped) total in one statement. `nextCursor`, sent back as
/// `cursor` with the same filters and sort, continues after the page.
#[utoipa::path(
    tag = "Catalog",
    params(ProductListQuery, ListParams),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = ProductList),
        (status = 400, body = ErrorBody, description = "Invalid paging, filter, sort or cursor"),
        (status = 401, body = ErrorBody, description = "Not signed in"),
        (status = 403, body = ErrorBody, description = "Missing `catalog.products.view`, or no tenant"),
    )
)]
#[get("/catalog/products")]
pub async fn list_products(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<ProductListQuery>,
    params: Query<ListParams>,
) -> AppResult<web::Json<ProductList>> {
    Ok(web::Json(
        service::list_products(&db, &ctx, &q, &params).await?,
    ))
}
