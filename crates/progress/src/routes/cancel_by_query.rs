//! `DELETE /progress/jobs?id=`: the collection form of the cancellation,
//! as Open Mercato clients send it.

use actix_web::{delete, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::collection::CollectionId;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;

use super::cancel::cancel_job;
use super::require_id;
use crate::dto::CancelResponse;

/// Cancels the job `?id=` (or a JSON body `{id}`).
#[utoipa::path(
    tag = "Progress",
    params(("id" = Option<String>, Query, description = "Job id; may come in a JSON body `{id}` instead")),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
    responses((status = 200, body = CancelResponse), (status = 403, body = ErrorBody))
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
