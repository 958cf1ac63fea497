//! `PUT /customers/pipelines {id, ...}`: the collection form.

use actix_web::{HttpResponse, put, web};
use stoa_acl::AuthContext;
use stoa_core::collection::WithId;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::update::update_pipeline_with;
use crate::dto::{Done, UpdatePipeline};

/// The collection form of `PUT /customers/pipelines/{id}`; same rules.
#[utoipa::path(
    tag = "Customers",
    params(("id" = Option<String>, Query, description = "Id, when not in the body")),
    request_body = UpdatePipeline,
    security(("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 200, body = Done),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[put("/customers/pipelines")]
pub async fn update_pipeline_by_body(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: WithId<Json<UpdatePipeline>>,
) -> AppResult<HttpResponse> {
    let id = body.id.uuid()?;
    update_pipeline_with(&ctx, &db, id, body.body.into_inner()).await
}
