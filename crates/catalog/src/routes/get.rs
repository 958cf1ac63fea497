//! `GET /catalog/products/{id}`: one product.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use crate::dto::ProductDetail;
use crate::service;

/// One product of the caller's tenant and organizations.
#[utoipa::path(
    tag = "Catalog",
    params(("id" = String, Path, description = "Product id (uuid)")),
    responses(
        (status = 200, body = ProductDetail),
        (status = 400, body = ErrorBody, description = "`Invalid product id`"),
        (status = 403, body = ErrorBody, description = "Missing `catalog.products.view`, or the product's organization is outside the caller's"),
        (status = 404, body = ErrorBody, description = "`Product not found` (also: other tenants)"),
    )
)]
#[get("/catalog/products/{id}")]
pub async fn get_product(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
) -> AppResult<web::Json<ProductDetail>> {
    Ok(web::Json(service::product_detail(&db, &ctx, &id).await?))
}
