//! `POST /catalog/products`: create a product.

use actix_web::{HttpResponse, post, web};
use stoa_acl::{AuthContext, OrganizationDirectory};
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use crate::dto::{CreateProduct, ProductCreated};
use crate::service;

/// Creates a product in the body's organization (default: the selected,
/// else the home organization), which must be inside the caller's.
#[utoipa::path(
    tag = "Catalog",
    request_body = CreateProduct,
    responses(
        (status = 201, body = ProductCreated, description = "Created; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid input` naming each field (a bad `priceAmount` among them), or an unknown organization"),
        (status = 403, body = ErrorBody, description = "Missing `catalog.products.manage`, or the organization is outside the caller's"),
        (status = 409, body = ErrorBody, description = "SKU or handle already used in the tenant (`sku_taken`, `handle_taken`)"),
        (status = 422, body = ErrorBody, description = "Refused by a write guard (business rule)"),
    )
)]
#[post("/catalog/products")]
pub async fn create_product(
    ctx: AuthContext,
    db: web::Data<Db>,
    organizations: web::Data<dyn OrganizationDirectory>,
    body: Json<CreateProduct>,
) -> AppResult<HttpResponse> {
    let (created, op) =
        service::create_product(&db, &ctx, organizations.get_ref(), body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(created))
}
