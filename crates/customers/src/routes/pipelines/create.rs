//! `POST /customers/pipelines`.

use actix_web::{HttpResponse, post, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use crate::PIPELINES_MANAGE;
use crate::dto::{CreatePipeline, Created};
use crate::service::pipelines;

/// Creates a pipeline.
#[utoipa::path(
    tag = "Customers",
    request_body = CreatePipeline,
    security(("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 201, body = Created, description = "Created; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "The pipeline (of a stage) does not exist for the caller"),
        (status = 422, body = ErrorBody, description = "Refused by a write guard"),
    )
)]
#[post("/customers/pipelines")]
pub async fn create_pipeline(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<CreatePipeline>,
) -> AppResult<HttpResponse> {
    ctx.require(PIPELINES_MANAGE)?;
    let (id, op) = pipelines::create(&db, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(Created { id }))
}
