//! `PUT /customers/deals {id, ...}` (or `?id=`): the collection form.

use actix_web::{HttpRequest, HttpResponse, put, web};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::collection::WithId;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::update::update_deal_with;
use crate::dto::{Done, UpdateDeal};

/// The collection form of `PUT /customers/deals/{id}`, as Open Mercato
/// clients send it; same rules.
#[utoipa::path(
    tag = "Customers",
    params(("id" = Option<String>, Query, description = "Deal id, when not in the body")),
    request_body(content = UpdateDeal, description = "The fields of `PUT /customers/deals/{id}` plus `id`"),
    responses(
        (status = 200, body = Done),
        (status = 400, body = ErrorBody, description = "No or malformed id, invalid body"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[put("/customers/deals")]
pub async fn update_deal_by_body(
    req: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    users: web::Data<dyn UserDirectory>,
    body: WithId<Json<UpdateDeal>>,
) -> AppResult<HttpResponse> {
    let id = body.id.uuid()?;
    update_deal_with(&req, &ctx, &db, users.as_ref(), id, body.body.into_inner()).await
}
