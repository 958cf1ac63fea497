//! `DELETE /catalog/products/{id}`: delete a product (undoable).

use actix_web::{HttpRequest, HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::lock::expected_updated_at;
use stoa_core::{AppResult, Path};

use crate::dto::ProductOk;
use crate::service;

/// Deletes a product for good; undo (through the action log) puts it back
/// with its id.
#[utoipa::path(
    tag = "Catalog",
    params(("id" = String, Path, description = "Product id (uuid)")),
    responses(
        (status = 200, body = ProductOk, description = "Deleted; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid product id`"),
        (status = 403, body = ErrorBody, description = "Missing `catalog.products.manage`, or the product's organization is outside the caller's"),
        (status = 404, body = ErrorBody, description = "`Product not found` (also: other tenants)"),
        (status = 409, body = ErrorBody, description = "Changed since the optimistic-lock header's time"),
        (status = 422, body = ErrorBody, description = "Refused by a write guard"),
    )
)]
#[delete("/catalog/products/{id}")]
pub async fn delete_product(
    ctx: AuthContext,
    db: web::Data<Db>,
    req: HttpRequest,
    id: Path<String>,
) -> AppResult<HttpResponse> {
    let expected = expected_updated_at(&req)?;
    let op = service::delete_product(&db, &ctx, &id, expected).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(ProductOk { ok: true }))
}
