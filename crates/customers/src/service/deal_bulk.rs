//! The bulk routes: validate what can be validated up front, then queue the
//! job in the same transaction (`stoa_jobs::enqueue_job`), with a record to
//! poll through the program's `JobRecords` (stoa's: stoa-progress's; a
//! program that embeds customers without them queues the job alone).

use diesel_async::AsyncConnection;
use serde_json::json;
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::AppError;
use stoa_core::db::Db;
use stoa_jobs::{JobRecords, JobSpec, enqueue_job};
use uuid::Uuid;

use super::target_organization;
use crate::commands::deals::{BULK_OWNER, BULK_STAGE};
use crate::dto::BulkQueued;
use crate::error::CustomersError;
use crate::queries::stages;
use crate::{DEALS_MANAGE, owners};

/// The ids once, in the order sent.
pub fn dedupe(ids: Vec<Uuid>) -> Vec<Uuid> {
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    ids.into_iter().filter(|id| seen.insert(*id)).collect()
}

/// Queues `customers.deals.bulk_update_owner` (`owner` `None` clears owners).
pub async fn queue_owner(
    db: &Db,
    records: Option<&dyn JobRecords>,
    ctx: &AuthContext,
    users: &dyn UserDirectory,
    ids: Vec<Uuid>,
    owner: Option<Uuid>,
) -> Result<BulkQueued, AppError> {
    ctx.require(DEALS_MANAGE)?;
    let tenant = ctx.tenant()?;
    target_organization(ctx)?;
    let ids = dedupe(ids);
    let n = ids.len();
    let mut conn = db.conn().await?;
    let queued = conn
        .transaction(async |conn| {
            if let Some(owner) = owner {
                owners::check(users, conn, tenant, owner).await?;
            }
            let spec = JobSpec::new(BULK_OWNER, json!({"ids": ids, "ownerUserId": owner}), n)
                .name("Reassign selected deals to a new owner")
                .description(format!("{n} deals queued for owner reassignment"))
                .meta(json!({"source": "customers.deals.bulk-update-owner", "ownerUserId": owner}))
                .cancellable(false);
            enqueue_job(conn, records, ctx, spec).await
        })
        .await?;
    stoa_jobs::wake_workers();
    Ok(BulkQueued {
        ok: true,
        progress_job_id: queued.progress_job_id,
        message: format!("Bulk owner update started ({n} deals)."),
    })
}

/// Queues `customers.deals.bulk_update_stage`.
pub async fn queue_stage(
    db: &Db,
    records: Option<&dyn JobRecords>,
    ctx: &AuthContext,
    ids: Vec<Uuid>,
    stage: Uuid,
) -> Result<BulkQueued, AppError> {
    ctx.require(DEALS_MANAGE)?;
    let tenant = ctx.tenant()?;
    target_organization(ctx)?;
    let ids = dedupe(ids);
    let n = ids.len();
    let mut conn = db.conn().await?;
    let queued = conn
        .transaction(async |conn| {
            stages::find(conn, tenant, stage)
                .await?
                .filter(|s| ctx.can_see_organization(s.organization_id))
                .ok_or(CustomersError::StageNotFound)?;
            let spec = JobSpec::new(BULK_STAGE, json!({"ids": ids, "pipelineStageId": stage}), n)
                .name("Move selected deals to a new stage")
                .description(format!("{n} deals queued for stage update"))
                .meta(json!({"source": "customers.deals.bulk-update-stage", "pipelineStageId": stage}))
                .cancellable(false);
            enqueue_job(conn, records, ctx, spec).await
        })
        .await?;
    stoa_jobs::wake_workers();
    Ok(BulkQueued {
        ok: true,
        progress_job_id: queued.progress_job_id,
        message: format!("Bulk stage update started ({n} deals)."),
    })
}
