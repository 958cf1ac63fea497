//! `PUT /customers/pipelines/{id}`.

use actix_web::{HttpResponse, put, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json, Path};
use uuid::Uuid;

use crate::PIPELINES_MANAGE;
use crate::dto::{Done, UpdatePipeline};
use crate::service::pipelines;

/// The body shared by both update forms.
pub async fn update_pipeline_with(
    ctx: &AuthContext,
    db: &Db,
    id: Uuid,
    body: UpdatePipeline,
) -> AppResult<HttpResponse> {
    ctx.require(PIPELINES_MANAGE)?;
    let op = pipelines::update(db, ctx, id, body).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Done { ok: true }))
}

/// Changes a pipeline.
#[utoipa::path(
    tag = "Customers",
    params(("id" = Uuid, Path)),
    request_body = UpdatePipeline,
    security(("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 200, body = Done, description = "Updated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[put("/customers/pipelines/{id}")]
pub async fn update_pipeline(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<Uuid>,
    body: Json<UpdatePipeline>,
) -> AppResult<HttpResponse> {
    update_pipeline_with(&ctx, &db, id.into_inner(), body.into_inner()).await
}
