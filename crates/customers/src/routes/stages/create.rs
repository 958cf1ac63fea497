//! `POST /customers/pipeline-stages`.

use actix_web::{HttpResponse, post, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use crate::PIPELINES_MANAGE;
use crate::dto::{CreateStage, Created};
use crate::service::stages;

/// Creates a pipeline stage.
#[utoipa::path(
    tag = "Customers",
    request_body = CreateStage,
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
#[post("/customers/pipeline-stages")]
pub async fn create_stage(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<CreateStage>,
) -> AppResult<HttpResponse> {
    ctx.require(PIPELINES_MANAGE)?;
    let (id, op) = stages::create(&db, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(Created { id }))
}
