//! The collection forms of the job writes, as Open Mercato clients send
//! them: `PUT /progress/jobs {id, ...}` and `DELETE /progress/jobs?id=`.
//! They run the same code as `PUT|DELETE /progress/jobs/{id}`.

use actix_web::{delete, put, web};
use stoa_acl::AuthContext;
use stoa_core::Json;
use stoa_core::collection::{CollectionId, WithId};
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};

use crate::routes::{CancelResponse, UpdateJob, Updated, cancel_job, update_job};

/// Reports progress on a job named by `id` in the body (or `?id=`).
#[utoipa::path(
    tag = "Progress",
    params(("id" = Option<String>, Query, description = "Job id, when not in the body")),
    request_body(content = UpdateJob, description = "The fields of `PUT /progress/jobs/{id}` plus `id`"),
    security(("bearerAuth" = [])),
    responses((status = 200, body = Updated), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
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

/// Cancels the job `?id=` (or a JSON body `{id}`).
#[utoipa::path(
    tag = "Progress",
    params(("id" = Option<String>, Query, description = "Job id; may come in a JSON body `{id}` instead")),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
    security(("bearerAuth" = [])),
    responses((status = 200, body = CancelResponse), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
#[delete("/progress/jobs")]
pub async fn cancel_by_query(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: CollectionId,
) -> AppResult<web::Json<CancelResponse>> {
    require_id(&id)?;
    cancel_job(&ctx, &db, id.raw()).await
}

/// No id at all is a 400; a malformed one is "not found", as on the path form.
fn require_id(id: &CollectionId) -> AppResult<()> {
    match id.0 {
        Some(_) => Ok(()),
        None => Err(AppError::bad_request(
            "Invalid query parameters: id: a uuid is required",
        )),
    }
}
