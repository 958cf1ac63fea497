//! `PUT /customers/deals/{id}`: changes a deal.

use actix_web::{HttpRequest, HttpResponse, put, web};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::lock::expected_updated_at;
use stoa_core::{AppResult, Json, Path};
use uuid::Uuid;

use crate::DEALS_MANAGE;
use crate::dto::{Done, UpdateDeal};
use crate::service::deals;

/// The body shared by both update forms.
pub async fn update_deal_with(
    req: &HttpRequest,
    ctx: &AuthContext,
    db: &Db,
    users: &dyn UserDirectory,
    id: Uuid,
    body: UpdateDeal,
) -> AppResult<HttpResponse> {
    ctx.require(DEALS_MANAGE)?;
    let expected = expected_updated_at(req)?;
    let op = deals::update(db, ctx, users, id, body, expected).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Done { ok: true }))
}

/// Changes a deal (absent fields keep, `null` clears). Honours
/// `x-om-ext-optimistic-lock-expected-updated-at` (409 when it moved).
#[utoipa::path(
    tag = "Customers",
    params(("id" = Uuid, Path, description = "Deal id")),
    request_body = UpdateDeal,
    responses(
        (status = 200, body = Done, description = "Updated; `x-om-operation` carries the undo token"),
        (status = 404, body = ErrorBody, description = "`Deal not found` (also: other tenants, organizations the caller does not see)"),
        (status = 409, body = ErrorBody, description = "The optimistic lock's `updatedAt` is stale"),
        (status = 422, body = ErrorBody, description = "Refused by a write guard"),
    )
)]
#[put("/customers/deals/{id}")]
pub async fn update_deal(
    req: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    users: web::Data<dyn UserDirectory>,
    id: Path<Uuid>,
    body: Json<UpdateDeal>,
) -> AppResult<HttpResponse> {
    update_deal_with(
        &req,
        &ctx,
        &db,
        users.as_ref(),
        id.into_inner(),
        body.into_inner(),
    )
    .await
}
