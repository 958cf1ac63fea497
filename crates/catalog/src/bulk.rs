//! `catalog.products.bulk_delete`: the job behind `POST /catalog/bulk-delete`.
//!
//! It acts as its creator ([`JobContext::unit_as`]): each unit of up to
//! [`UNIT_SIZE`] products re-resolves the creator in its transaction, checks
//! `catalog.products.manage`, locks its products, checks each against the
//! creator's tenant and organizations, deletes them with one statement and
//! records one undoable action-log entry per product (with its
//! `catalog.product.deleted` event) through `record_batch`, where write
//! guards see every entry.
//!
//! The reference stops at the first product it cannot delete and keeps the
//! deletions before it. Here the first such product (missing, of another
//! tenant, outside the creator's organizations, refused by a guard) ends the
//! job for good (`JobError::fatal`, naming the product): its unit is rolled
//! back whole, the units before it stay deleted, and the progress record is
//! `failed` with that message.

use std::collections::HashMap;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_acl::{AuthContext, Reach};
use stoa_core::command::record_batch;
use stoa_jobs::{JobContext, JobError, JobHandler, Outcome, UnitError, UnitReport};
use uuid::Uuid;

use crate::MANAGE;
use crate::commands::{DELETE, deleted_entry};
use crate::queries;

/// The job's kind (and the progress record's `jobType`).
pub const KIND: &str = "catalog.products.bulk_delete";
/// Products per unit: one lock, one delete and two recording statements each.
pub const UNIT_SIZE: usize = 500;

/// The bulk-delete job handler.
pub struct BulkDelete;

impl JobHandler for BulkDelete {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let ids: Vec<Uuid> = serde_json::from_value(ctx.payload()["ids"].clone())
                .map_err(|e| JobError::fatal(format!("Invalid job payload: ids: {e}")))?;
            for (unit, chunk) in ids.chunks(UNIT_SIZE).enumerate() {
                let chunk = chunk.to_vec();
                let items = chunk.len();
                ctx.unit_as(
                    &unit.to_string(),
                    items,
                    Box::new(move |conn, creator| Box::pin(delete_unit(conn, creator, chunk))),
                )
                .await?;
            }
            // Units are all or nothing: once the job completes, every
            // product it names was deleted by one of its units.
            Ok(Outcome::Completed(Some(
                json!({ "affectedCount": ids.len() }),
            )))
        })
    }
}

fn fatal(message: String) -> UnitError {
    UnitError::Job(JobError::fatal(message))
}

/// Deletes the products `ids` as `creator`, or fails the job naming the
/// first one (in the request's order) it may not delete.
async fn delete_unit(
    conn: &mut AsyncPgConnection,
    creator: AuthContext,
    ids: Vec<Uuid>,
) -> Result<UnitReport, UnitError> {
    if !creator.has(MANAGE) {
        return Err(fatal(format!("The job's creator no longer holds {MANAGE}")));
    }
    let rows = queries::lock_many(conn, &ids).await?;
    let by_id: HashMap<Uuid, _> = rows.into_iter().map(|row| (row.id, row)).collect();
    let mut entries = Vec::with_capacity(ids.len());
    for id in &ids {
        // Another tenant's product, or one of an organization outside the
        // creator's (`AuthContext::reach`), does not exist for the creator:
        // the job's message names no organization it could not see.
        let row = by_id
            .get(id)
            .filter(|row| Some(row.tenant_id) == creator.tenant_id)
            .filter(|row| {
                creator.reach(Some(row.tenant_id), Some(row.organization_id)) == Reach::Write
            })
            .ok_or_else(|| fatal(format!("Product {id} not found")))?;
        entries.push((DELETE, deleted_entry(row)));
    }
    queries::delete_many(conn, &ids).await?;
    // Guards see every entry first; a refusal rolls the unit back and,
    // being final (4xx), ends the job with its message.
    record_batch(conn, &creator.actor(), entries)
        .await
        .map_err(|e| UnitError::Job(JobError::from(e)))?;
    Ok(UnitReport::ok())
}
