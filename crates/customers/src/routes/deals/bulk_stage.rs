//! `POST /customers/deals/bulk-update-stage`: queues the stage move.

use actix_web::{HttpResponse, post, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::BulkErrorBody;
use stoa_core::{AppResult, Json};
use stoa_jobs::JobRecords;

use crate::dto::{BulkQueued, BulkUpdateStage};
use crate::service::deal_bulk;

/// Checks the ids (1–10,000 uuids), the stage (of the tenant, in an
/// organization the caller sees) and the caller's feature and organization,
/// then queues the job and answers at once with the progress record to
/// poll (`null` in a program that keeps no job records). Every error, 401 and 403 included, keeps the bulk envelope
/// `{ok:false, progressJobId:null, message, error}`.
#[utoipa::path(
    tag = "Customers",
    request_body = BulkUpdateStage,
    responses(
        (status = 201, body = BulkQueued, description = "Queued"),
        (status = 400, body = BulkErrorBody, description = "`Invalid payload` (bad or too many ids, bad stage id), `Pipeline stage not found`"),
        (status = 401, body = BulkErrorBody),
        (status = 403, body = BulkErrorBody, description = "Missing feature (`requiredFeatures`), or an organization outside the caller's"),
    )
)]
#[post("/customers/deals/bulk-update-stage")]
pub async fn bulk_update_stage(
    ctx: AuthContext,
    db: web::Data<Db>,
    records: Option<web::Data<dyn JobRecords>>,
    body: Json<BulkUpdateStage>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    let records = records.as_ref().map(|r| r.get_ref());
    let queued =
        deal_bulk::queue_stage(&db, records, &ctx, body.ids, body.pipeline_stage_id).await?;
    Ok(HttpResponse::Created().json(queued))
}
