//! `POST /customers/deals`: creates a deal.

use actix_web::{HttpResponse, post, web};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use crate::DEALS_MANAGE;
use crate::dto::{CreateDeal, Created};
use crate::service::deals;

/// Creates a deal in the caller's selected (else home) organization. A
/// stage sets the pipeline and copies its label.
#[utoipa::path(
    tag = "Customers",
    request_body = CreateDeal,
    responses(
        (status = 201, body = Created, description = "Created; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "Invalid body (every failing field), `Pipeline stage not found`, `Owner not found in this tenant`, ..."),
        (status = 403, body = ErrorBody, description = "Missing feature, or an organization outside the caller's"),
        (status = 422, body = ErrorBody, description = "Refused by a write guard"),
    )
)]
#[post("/customers/deals")]
pub async fn create_deal(
    ctx: AuthContext,
    db: web::Data<Db>,
    users: web::Data<dyn UserDirectory>,
    body: Json<CreateDeal>,
) -> AppResult<HttpResponse> {
    ctx.require(DEALS_MANAGE)?;
    let (id, op) = deals::create(&db, &ctx, users.as_ref(), body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(Created { id }))
}
