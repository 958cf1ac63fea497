//! `PUT /progress/jobs {id, ...}`: the collection form of the progress
//! report, as Open Mercato clients send it.

use actix_web::{put, web};
use stoa_acl::AuthContext;
use stoa_core::collection::WithId;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::require_id;
use super::update::update_job;
use crate::dto::{UpdateJob, Updated};

/// Reports progress on a job named by `id` in the body (or `?id=`).
#[utoipa::path(
    tag = "Progress",
    params(("id" = Option<String>, Query, description = "Job id, when not in the body")),
    request_body(content = UpdateJob, description = "The fields of `PUT /progress/jobs/{id}` plus `id`"),
    responses((status = 200, body = Updated), (status = 404, body = ErrorBody))
)]
#[put("/progress/jobs")]
pub async fn update_by_body(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: WithId<Json<UpdateJob>>,
) -> AppResult<web::Json<Updated>> {
    require_id(&body.id)?;
    update_job(&ctx, &db, body.id.raw(), body.body.into_inner()).await
}
