//! Access-log retention: reads older than their kind's age are deleted.
//!
//! The reference keeps access logs of users and roles for 7 days and every
//! other kind for 8 hours (`../shared/reference/audit-logs.md`, §2); without
//! a purge, one row per read grows without bound. The owner of the table
//! deletes; the audit-logs module decides when (a recurring job) and for
//! how long (its configuration).

use std::time::Duration;

use diesel::pg::data_types::PgInterval;
use diesel::sql_types::{Array, BigInt, Interval, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::REPEAT_SPAN_MICROS;

/// How long access-log reads are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Resource kinds kept for [`Retention::core_age`].
    pub core_kinds: Vec<String>,
    pub core_age: Duration,
    /// The age of every other kind's reads.
    pub other_age: Duration,
}

/// Reads one statement deletes at most: each batch is its own short
/// transaction, so a large backlog never holds locks or bloats one commit.
pub const PURGE_BATCH: i64 = 5_000;

/// Deletes the reads older than their kind's age, `batch` rows per statement
/// until none is left; returns how many rows were deleted. Both statements
/// walk the `created_at` index from its oldest end. A row is deleted once
/// its last repeated read is past the age: [`super::REPEAT_SPAN`] after its own
/// time at most.
pub async fn purge_expired(
    conn: &mut AsyncPgConnection,
    retention: &Retention,
    batch: i64,
) -> diesel::QueryResult<u64> {
    let batch = batch.max(1);
    let mut deleted = 0u64;
    for (kinds, age) in [
        (CORE_KINDS, retention.core_age),
        (OTHER_KINDS, retention.other_age),
    ] {
        loop {
            let n = diesel::sql_query(format!(
                "DELETE FROM access_reads WHERE (id, created_at) IN ( \
                     SELECT id, created_at FROM access_reads \
                     WHERE created_at < now() - $1 AND {kinds} \
                     ORDER BY created_at LIMIT $3)"
            ))
            .bind::<Interval, _>(interval(age))
            .bind::<Array<Text>, _>(&retention.core_kinds)
            .bind::<BigInt, _>(batch)
            .execute(conn)
            .await?;
            deleted += n as u64;
            if (n as i64) < batch {
                break;
            }
        }
    }
    Ok(deleted)
}

/// The kinds each purge statement covers (`$2` is the core kinds).
const CORE_KINDS: &str = "resource_kind = ANY($2)";
const OTHER_KINDS: &str = "resource_kind <> ALL($2)";

/// `age`, and the span of a row's repeated reads (see [`purge_expired`]).
fn interval(age: Duration) -> PgInterval {
    PgInterval::from_microseconds(
        i64::try_from(age.as_micros())
            .unwrap_or(i64::MAX)
            .saturating_add(REPEAT_SPAN_MICROS),
    )
}
