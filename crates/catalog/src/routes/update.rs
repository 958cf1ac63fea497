//! `PUT /catalog/products/{id}`: change a product.

use actix_web::{HttpRequest, HttpResponse, put, web};
use stoa_acl::{AuthContext, OrganizationDirectory};
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::lock::expected_updated_at;
use stoa_core::{AppResult, Json, Path};

use crate::dto::{ProductOk, UpdateProduct};
use crate::service;

/// Updates a product. Fields are tri-state (absent keeps, `null` clears).
/// With `x-om-ext-optimistic-lock-expected-updated-at`, a product changed
/// since that `updatedAt` is refused with 409.
#[utoipa::path(
    tag = "Catalog",
    params(
        ("id" = String, Path, description = "Product id (uuid)"),
        ("x-om-ext-optimistic-lock-expected-updated-at" = Option<String>, Header, description = "The `updatedAt` last read"),
    ),
    request_body = UpdateProduct,
    responses(
        (status = 200, body = ProductOk, description = "Updated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid product id`, `Invalid input` naming each field, or a malformed lock header"),
        (status = 403, body = ErrorBody, description = "Missing `catalog.products.manage`, or an organization outside the caller's"),
        (status = 404, body = ErrorBody, description = "`Product not found` (also: other tenants)"),
        (status = 409, body = ErrorBody, description = "Changed since the lock header's time (`optimistic_lock_conflict`), or SKU/handle taken"),
        (status = 422, body = ErrorBody, description = "Refused by a write guard"),
    )
)]
#[put("/catalog/products/{id}")]
pub async fn update_product(
    ctx: AuthContext,
    db: web::Data<Db>,
    organizations: web::Data<dyn OrganizationDirectory>,
    req: HttpRequest,
    id: Path<String>,
    body: Json<UpdateProduct>,
) -> AppResult<HttpResponse> {
    let expected = expected_updated_at(&req)?;
    let op = service::update_product(
        &db,
        &ctx,
        organizations.get_ref(),
        &id,
        body.into_inner(),
        expected,
    )
    .await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(ProductOk { ok: true }))
}
