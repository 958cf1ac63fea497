//! The durable side of units: their `job_units` rows, the running
//! counters, and the failed items a job's result lists.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_core::prepared::Cached;
use uuid::Uuid;

use super::{FAILED_ITEMS_LISTED, FailedItem};
use crate::records::JobRecords;
use crate::schema::{job_queue, job_units};

/// Inserts the unit's row; `false` when it exists (finished earlier).
///
/// The same statement makes the unit's transaction commit without waiting
/// for its WAL to reach the disk (`synchronous_commit = off`, for this
/// transaction only): a unit is all or nothing and its `job_units` row
/// commits with its effects, so a database crash that loses the last units'
/// commits loses their rows too, and the job's retry runs them again, as it
/// does for a worker killed mid-unit. A bulk job of 400 units paid one WAL
/// flush per unit (about 1.3 s of 5.3 s for 100,000 deal updates in units
/// of 250, issue 52); the job's end (its status, committed normally) flushes
/// everything before it.
pub(super) async fn claim_unit(
    conn: &mut AsyncPgConnection,
    job: Uuid,
    key: &str,
    items: i32,
) -> QueryResult<bool> {
    let fresh = Cached(diesel::sql_query(
        "INSERT INTO job_units (job_id, unit, items) \
         SELECT $1, $2, $3 FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit \
         ON CONFLICT DO NOTHING",
    )
    .bind::<diesel::sql_types::Uuid, _>(job)
    .bind::<diesel::sql_types::Text, _>(key)
    .bind::<diesel::sql_types::Integer, _>(items))
    .execute(conn)
    .await?;
    Ok(fresh > 0)
}

/// Stores the unit's failed items and moves the counters on, in O(1).
pub(super) async fn record(
    conn: &mut AsyncPgConnection,
    job: Uuid,
    progress: Option<(&dyn JobRecords, Uuid)>,
    key: &str,
    items: i32,
    failed: Vec<FailedItem>,
) -> QueryResult<()> {
    if !failed.is_empty() {
        let count = i32::try_from(failed.len()).unwrap_or(i32::MAX);
        let json = serde_json::to_value(&failed).unwrap_or(Value::Null);
        diesel::update(
            job_units::table
                .filter(job_units::job_id.eq(job))
                .filter(job_units::unit.eq(key)),
        )
        .set(job_units::failed_items.eq(json))
        .execute(conn)
        .await?;
        diesel::update(job_queue::table.filter(job_queue::id.eq(job)))
            .set(job_queue::items_failed.eq(job_queue::items_failed + count))
            .execute(conn)
            .await?;
    }
    if let Some((records, progress)) = progress {
        records.add_processed(conn, progress, items).await?;
    }
    Ok(())
}

/// The failed items of a job: the first [`FAILED_ITEMS_LISTED`] (in the order
/// their units finished) and how many failed in all.
pub async fn failed_items(
    conn: &mut AsyncPgConnection,
    job: Uuid,
) -> QueryResult<(Vec<FailedItem>, i64)> {
    let total: i32 = job_queue::table
        .filter(job_queue::id.eq(job))
        .select(job_queue::items_failed)
        .first(conn)
        .await
        .optional()?
        .unwrap_or(0);
    if total == 0 {
        return Ok((Vec::new(), 0));
    }
    let units: Vec<Option<Value>> = job_units::table
        .filter(job_units::job_id.eq(job))
        .filter(job_units::failed_items.is_not_null())
        .order((job_units::done_at.asc(), job_units::unit.asc()))
        .select(job_units::failed_items)
        .limit(i64::try_from(FAILED_ITEMS_LISTED).unwrap_or(100))
        .load(conn)
        .await?;
    let listed = units
        .into_iter()
        .flatten()
        .flat_map(|v| serde_json::from_value::<Vec<FailedItem>>(v).unwrap_or_default())
        .take(FAILED_ITEMS_LISTED)
        .collect();
    Ok((listed, i64::from(total)))
}

/// `summary` with `failedCount` and `failedItems` added (a handler's own
/// values win); a non-object summary is kept as it is.
pub fn with_failures(summary: Option<Value>, failed: &[FailedItem], count: i64) -> Option<Value> {
    let mut object = match summary {
        None => serde_json::Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => return Some(other),
    };
    object
        .entry("failedCount")
        .or_insert_with(|| Value::from(count));
    object
        .entry("failedItems")
        .or_insert_with(|| serde_json::to_value(failed).unwrap_or(Value::Null));
    Some(Value::Object(object))
}
