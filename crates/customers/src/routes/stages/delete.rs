//! `DELETE /customers/pipeline-stages/{id}`.

use actix_web::{HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};
use uuid::Uuid;

use crate::PIPELINES_MANAGE;
use crate::dto::Done;
use crate::service::stages;

/// The body shared by both delete forms.
pub async fn delete_stage_with(ctx: &AuthContext, db: &Db, id: Uuid) -> AppResult<HttpResponse> {
    ctx.require(PIPELINES_MANAGE)?;
    let op = stages::delete(db, ctx, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Done { ok: true }))
}

/// Deletes a pipeline stage (409 while anything still uses it).
#[utoipa::path(
    tag = "Customers",
    params(("id" = Uuid, Path)),
    security(("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 200, body = Done, description = "Deleted; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Still in use"),
    )
)]
#[delete("/customers/pipeline-stages/{id}")]
pub async fn delete_stage(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<Uuid>,
) -> AppResult<HttpResponse> {
    delete_stage_with(&ctx, &db, id.into_inner()).await
}
