//! `POST /customers/deals/bulk-update-owner`: queues the owner change.

use actix_web::{HttpResponse, post, web};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::db::Db;
use stoa_core::error::BulkErrorBody;
use stoa_core::{AppResult, Json};
use stoa_jobs::JobRecords;

use crate::dto::{BulkQueued, BulkUpdateOwner};
use crate::service::deal_bulk;

/// Checks the ids (1–10,000 uuids), the owner (a user of the tenant, or
/// `null` to clear) and the caller's feature and organization, then queues
/// the job and answers at once with the progress record to poll
/// (`GET /progress/jobs/{progressJobId}`; `null` in a program that keeps no
/// job records). Every error, 401 and 403 included, keeps the
/// bulk envelope `{ok:false, progressJobId:null, message, error}`.
#[utoipa::path(
    tag = "Customers",
    request_body = BulkUpdateOwner,
    responses(
        (status = 201, body = BulkQueued, description = "Queued"),
        (status = 400, body = BulkErrorBody, description = "`Invalid payload` (bad or too many ids), `Owner not found in this tenant`"),
        (status = 401, body = BulkErrorBody),
        (status = 403, body = BulkErrorBody, description = "Missing feature (`requiredFeatures`), or an organization outside the caller's"),
    )
)]
#[post("/customers/deals/bulk-update-owner")]
pub async fn bulk_update_owner(
    ctx: AuthContext,
    db: web::Data<Db>,
    users: web::Data<dyn UserDirectory>,
    records: Option<web::Data<dyn JobRecords>>,
    body: Json<BulkUpdateOwner>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    let owner = body.owner_user_id.flatten();
    let records = records.as_ref().map(|r| r.get_ref());
    let queued =
        deal_bulk::queue_owner(&db, records, &ctx, users.as_ref(), body.ids, owner).await?;
    Ok(HttpResponse::Created().json(queued))
}
