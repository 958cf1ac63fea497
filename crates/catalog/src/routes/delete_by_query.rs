//! `DELETE /catalog/products?id=` (or body `{id}`): the collection form of
//! `DELETE /catalog/products/{id}`, as Open Mercato clients send it.

use actix_web::{HttpRequest, HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::collection::CollectionId;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::lock::expected_updated_at;

use crate::dto::ProductOk;
use crate::service;

/// The collection form of `DELETE /catalog/products/{id}`: `?id=` or a JSON
/// body `{id}`; same rules.
#[utoipa::path(
    tag = "Catalog",
    params(("id" = Option<String>, Query, description = "Product id (uuid); may come in a JSON body `{id}` instead")),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
    responses(
        (status = 200, body = ProductOk, description = "Deleted; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Product id is required.` or `Invalid product id`"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[delete("/catalog/products")]
pub async fn delete_product_by_query(
    ctx: AuthContext,
    db: web::Data<Db>,
    req: HttpRequest,
    id: CollectionId,
) -> AppResult<HttpResponse> {
    let expected = expected_updated_at(&req)?;
    let op = service::delete_product(&db, &ctx, id.raw(), expected).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(ProductOk { ok: true }))
}
