//! `POST /catalog/bulk-delete`: delete many products in a background job.

use actix_web::{HttpResponse, post, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::BulkErrorBody;
use stoa_core::{AppResult, Json};
use stoa_jobs::JobRecords;

use crate::dto::{BulkDelete, BulkDeleteStarted};
use crate::service;

/// Starts deleting `ids` (1–10,000, duplicates dropped; `confirm: true`
/// required) and answers at once with the progress record to poll
/// (`GET /progress/jobs/{progressJobId}`; `null` in a program that keeps
/// no job records). The job acts as the caller: it
/// stops at the first product the caller may not delete (missing, another
/// tenant's, outside its organizations), naming it, and keeps the units
/// deleted before it. Every error, 401 and 403 included, is in the bulk
/// envelope `{ok:false, progressJobId:null, message, error}`.
#[utoipa::path(
    tag = "Catalog",
    request_body = BulkDelete,
    responses(
        (status = 201, body = BulkDeleteStarted, description = "Queued: `{ok: true, progressJobId, message}`"),
        (status = 400, body = BulkErrorBody, description = "`{ok:false, progressJobId:null, message:\"Invalid payload\", error}` naming each field: `confirm` not true, `ids` empty, over 10,000 or not uuids, `scope` not `selected`/`filtered`"),
        (status = 401, body = BulkErrorBody, description = "`{ok:false, progressJobId:null, message, error}`, like every error of the route"),
        (status = 403, body = BulkErrorBody, description = "Missing `catalog.products.manage` (`requiredFeatures`), or no tenant; in the bulk envelope"),
    )
)]
#[post("/catalog/bulk-delete")]
pub async fn bulk_delete_products(
    ctx: AuthContext,
    db: web::Data<Db>,
    records: Option<web::Data<dyn JobRecords>>,
    body: Json<BulkDelete>,
) -> AppResult<HttpResponse> {
    let records = records.as_ref().map(|r| r.get_ref());
    let queued = service::start_bulk_delete(&db, records, &ctx, body.into_inner()).await?;
    Ok(HttpResponse::Created().json(BulkDeleteStarted {
        ok: true,
        progress_job_id: queued.progress_job_id,
        message: "Bulk delete started.".into(),
    }))
}
