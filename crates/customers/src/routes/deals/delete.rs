//! `DELETE /customers/deals/{id}`: deletes a deal.

use actix_web::{HttpRequest, HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::lock::expected_updated_at;
use stoa_core::{AppResult, Path};
use uuid::Uuid;

use crate::DEALS_MANAGE;
use crate::dto::Done;
use crate::service::deals;

/// The body shared by both delete forms.
pub async fn delete_deal_with(
    req: &HttpRequest,
    ctx: &AuthContext,
    db: &Db,
    id: Uuid,
) -> AppResult<HttpResponse> {
    ctx.require(DEALS_MANAGE)?;
    let expected = expected_updated_at(req)?;
    let op = deals::delete(db, ctx, id, expected).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Done { ok: true }))
}

/// Deletes a deal for good; undo puts it back with the
/// same id. Honours the optimistic-lock header.
#[utoipa::path(
    tag = "Customers",
    params(("id" = Uuid, Path, description = "Deal id")),
    responses(
        (status = 200, body = Done, description = "Deleted; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "Malformed id"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[delete("/customers/deals/{id}")]
pub async fn delete_deal(
    req: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<Uuid>,
) -> AppResult<HttpResponse> {
    delete_deal_with(&req, &ctx, &db, id.into_inner()).await
}
