//! `POST /customers/pipeline-stages/reorder`.

use actix_web::{HttpResponse, post, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use crate::PIPELINES_MANAGE;
use crate::dto::{Done, ReorderStages};
use crate::service::stages;

/// Gives pipeline stages their new order, all or none: each named
/// stage (of the caller's tenant, in an organization it may write) gets its
/// `order`; one undoable action-log entry per stage whose order changes.
#[utoipa::path(
    tag = "Customers",
    request_body = ReorderStages,
    responses(
        (status = 200, body = Done, description = "Reordered; `x-om-operation` carries the undo token of the last changed stage"),
        (status = 400, body = ErrorBody, description = "`stages` empty, over 1,000, a stage named twice, an order below 0, an id that is not a uuid"),
        (status = 403, body = ErrorBody, description = "Missing `customers.pipelines.manage`, or a stage of an organization the caller may not write"),
        (status = 404, body = ErrorBody, description = "`Pipeline stage not found`: a stage of another tenant, of an organization the caller does not see, or none"),
        (status = 422, body = ErrorBody, description = "Refused by a write guard"),
    )
)]
#[post("/customers/pipeline-stages/reorder")]
pub async fn reorder_stages(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<ReorderStages>,
) -> AppResult<HttpResponse> {
    ctx.require(PIPELINES_MANAGE)?;
    let op = stages::reorder(&db, &ctx, body.into_inner()).await?;
    let mut res = match &op {
        Some(op) => with_operation(HttpResponse::Ok(), op),
        None => HttpResponse::Ok(),
    };
    Ok(res.json(Done { ok: true }))
}
