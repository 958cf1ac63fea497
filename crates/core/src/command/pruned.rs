//! Entries the retention removed (issue 33): the action log is partitioned
//! by month and its oldest months are dropped (stoa-audit-logs'
//! `audit_logs.partitions` job), which records how far back it pruned in
//! `audit_log_prunes`. Ids and undo tokens are time-ordered UUIDs (version
//! 7): a token or id that is not found but was made before that horizon
//! names an entry that was pruned, and undo and redo say so
//! (400 `entry_pruned`) instead of the reference's "not available".

use std::time::{SystemTime, UNIX_EPOCH};

use diesel::OptionalExtension;
use diesel::sql_types::{Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::{Builder, Uuid};

use crate::error::AppError;

/// The error code of an undo or redo whose entry was pruned.
pub const ENTRY_PRUNED: &str = "entry_pruned";

/// A new time-ordered id (UUID version 7: 48 bits of Unix milliseconds, then
/// 74 random bits): the action log's ids and undo tokens. Ordered ids also
/// keep the primary key's inserts at the right edge of the index.
pub fn time_ordered_id() -> Uuid {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0);
    let random = Uuid::new_v4();
    let mut bytes = [0u8; 10];
    bytes.copy_from_slice(&random.as_bytes()[6..16]);
    Builder::from_unix_timestamp_millis(millis, &bytes).into_uuid()
}

/// When a time-ordered id was made; `None` for any other id (entries
/// written before the ids were time-ordered, or a client's made-up value).
pub fn made_at(id: Uuid) -> Option<OffsetDateTime> {
    if id.get_version_num() != 7 {
        return None;
    }
    let (secs, nanos) = id.get_timestamp()?.to_unix();
    let at = OffsetDateTime::from_unix_timestamp(i64::try_from(secs).ok()?).ok()?;
    Some(at + time::Duration::nanoseconds(i64::from(nanos)))
}

#[derive(diesel::QueryableByName)]
struct Horizon {
    #[diesel(sql_type = Timestamptz)]
    pruned_before: OffsetDateTime,
}

/// Whether the entry of `key` (an undo token or an entry id) that was not
/// found was pruned: `key` is time-ordered and older than the action log's
/// prune horizon.
pub async fn was_pruned(conn: &mut AsyncPgConnection, key: &str) -> Result<bool, AppError> {
    let Some(made) = key.parse::<Uuid>().ok().and_then(made_at) else {
        return Ok(false);
    };
    let horizon: Option<Horizon> =
        diesel::sql_query("SELECT pruned_before FROM audit_log_prunes WHERE table_name = $1")
            .bind::<Text, _>("action_logs")
            .get_result(conn)
            .await
            .optional()?;
    Ok(horizon.is_some_and(|h| made < h.pruned_before))
}

/// 400 `entry_pruned`: the entry is older than the retention kept.
pub fn entry_pruned(what: &'static str) -> AppError {
    AppError::bad_request(what).with_code(ENTRY_PRUNED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_ordered_id_carries_its_time_and_others_carry_none() {
        let before = OffsetDateTime::now_utc() - time::Duration::milliseconds(1);
        let id = time_ordered_id();
        let after = OffsetDateTime::now_utc() + time::Duration::milliseconds(1);
        assert_eq!(id.get_version_num(), 7);
        let made = made_at(id);
        assert!(made.is_some_and(|m| m >= before && m <= after), "{made:?}");
        assert_eq!(made_at(Uuid::new_v4()), None);
        assert_ne!(time_ordered_id(), time_ordered_id());
    }
}
