//! `DELETE /customers/deals?id=` (or body `{id}`): the collection form.

use actix_web::{HttpRequest, HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::collection::CollectionId;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;

use super::delete::delete_deal_with;
use crate::dto::Done;

/// The collection form of `DELETE /customers/deals/{id}`; same rules.
#[utoipa::path(
    tag = "Customers",
    params(("id" = Option<String>, Query, description = "Deal id; may come in a JSON body `{id}` instead")),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
    responses(
        (status = 200, body = Done),
        (status = 400, body = ErrorBody, description = "No or malformed id"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[delete("/customers/deals")]
pub async fn delete_deal_by_query(
    req: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    id: CollectionId,
) -> AppResult<HttpResponse> {
    let id = id.uuid()?;
    delete_deal_with(&req, &ctx, &db, id).await
}
