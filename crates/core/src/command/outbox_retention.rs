//! Retention of the event outbox: delivered and dead events older than a
//! number of days are deleted (their delivery rows go with them, `ON DELETE
//! CASCADE`), so the queue stays the size of its recent traffic instead of
//! every event ever written (a bulk job adds 200,000). Pending events are
//! never deleted, however old: they are still owed to a subscriber.
//!
//! The outbox has no index on its time columns (each would cost every
//! event more writes), so the prune walks the primary key: ids grow with
//! time, and a batch that meets an event newer than the cutoff ends it.

use diesel::sql_types::{BigInt, Integer};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::db::DbError;
use crate::prepared::Cached;

/// Events one statement looks at (one short transaction each).
pub const PRUNE_BATCH: i64 = 5_000;

/// One batch: the next `$2` events after id `$1`, those older than `$3`
/// days, and the delete of the finished ones among them.
const PRUNE: &str = "WITH batch AS ( \
       SELECT id, created_at, status FROM event_outbox WHERE id > $1 ORDER BY id LIMIT $2), \
     old AS ( \
       SELECT id, status FROM batch WHERE created_at < now() - make_interval(days => $3)), \
     gone AS ( \
       DELETE FROM event_outbox WHERE id IN (SELECT id FROM old WHERE status <> 'pending') \
       RETURNING 1) \
     SELECT (SELECT count(*) FROM batch) AS seen, (SELECT count(*) FROM old) AS old, \
       COALESCE((SELECT max(id) FROM old), $1) AS last, (SELECT count(*) FROM gone) AS deleted";

#[derive(diesel::QueryableByName)]
struct Batch {
    #[diesel(sql_type = BigInt)]
    seen: i64,
    #[diesel(sql_type = BigInt)]
    old: i64,
    #[diesel(sql_type = BigInt)]
    last: i64,
    #[diesel(sql_type = BigInt)]
    deleted: i64,
}

/// Deletes delivered and dead events created more than `days` days ago;
/// returns how many.
pub async fn prune(conn: &mut AsyncPgConnection, days: i32) -> Result<u64, DbError> {
    let mut after = 0i64;
    let mut deleted = 0u64;
    loop {
        let batch: Batch = Cached(
            diesel::sql_query(PRUNE)
                .bind::<BigInt, _>(after)
                .bind::<BigInt, _>(PRUNE_BATCH)
                .bind::<Integer, _>(days.max(0)),
        )
        .get_result(conn)
        .await?;
        deleted += u64::try_from(batch.deleted).unwrap_or(0);
        // The end of the table, or an event newer than the cutoff: the
        // rest is newer still.
        if batch.seen < PRUNE_BATCH || batch.old < batch.seen {
            return Ok(deleted);
        }
        after = batch.last;
    }
}
