//! `PUT /catalog/products {id, ...}` (or `?id=`): the collection form of
//! `PUT /catalog/products/{id}`, as Open Mercato clients send it.

use actix_web::{HttpRequest, HttpResponse, put, web};
use stoa_acl::{AuthContext, OrganizationDirectory};
use stoa_core::collection::WithId;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::lock::expected_updated_at;
use stoa_core::{AppResult, Json};

use crate::dto::{ProductOk, UpdateProduct};
use crate::service;

/// The collection form of `PUT /catalog/products/{id}`: the id comes in the
/// body (`{id, ...}`) or as `?id=`; same rules.
#[utoipa::path(
    tag = "Catalog",
    params(
        ("id" = Option<String>, Query, description = "Product id (uuid), when not in the body"),
        ("x-om-ext-optimistic-lock-expected-updated-at" = Option<String>, Header, description = "The `updatedAt` last read"),
    ),
    request_body(content = UpdateProduct, description = "The fields of `PUT /catalog/products/{id}` plus `id` (uuid)"),
    responses(
        (status = 200, body = ProductOk, description = "Updated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Product id is required.`, `Invalid product id` or `Invalid input`"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[put("/catalog/products")]
pub async fn update_product_by_body(
    ctx: AuthContext,
    db: web::Data<Db>,
    organizations: web::Data<dyn OrganizationDirectory>,
    req: HttpRequest,
    body: WithId<Json<UpdateProduct>>,
) -> AppResult<HttpResponse> {
    let expected = expected_updated_at(&req)?;
    let op = service::update_product(
        &db,
        &ctx,
        organizations.get_ref(),
        body.id.raw(),
        body.body.into_inner(),
        expected,
    )
    .await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(ProductOk { ok: true }))
}
