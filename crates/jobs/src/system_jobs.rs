//! The queue's own jobs: a diagnostic job, and the recurring sweeps
//! ([`schedules`]) that keep the queue and the event outbox (core's table,
//! pruned through core's function) tidy.

use std::time::Duration;

use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use serde_json::json;

use crate::queue::{JobHandler, Outcome};
use crate::schedules::Schedule;
use crate::units::{JobContext, JobError, UnitReport};

/// A diagnostic job: `{units: n, unitMillis: ms, unitItems: k}` runs n units
/// of k items (default 1) taking ms each. Used by the tests (a worker killed
/// mid-job) and to check a deployment's workers.
pub struct SleepUnits;

impl JobHandler for SleepUnits {
    fn kind(&self) -> &'static str {
        "system.sleep_units"
    }
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let units = ctx.payload()["units"].as_u64().unwrap_or(1).min(100_000);
            let millis = ctx.payload()["unitMillis"]
                .as_u64()
                .unwrap_or(0)
                .min(60_000);
            let items = ctx.payload()["unitItems"]
                .as_u64()
                .unwrap_or(1)
                .clamp(1, 10_000);
            let items = usize::try_from(items).unwrap_or(1);
            let mut ran = 0u64;
            for i in 0..units {
                if ctx.cancel_requested().await {
                    return Ok(Outcome::Cancelled);
                }
                let did = ctx
                    .unit(
                        &i.to_string(),
                        items,
                        Box::new(move |_conn| {
                            Box::pin(async move {
                                if millis > 0 {
                                    tokio::time::sleep(Duration::from_millis(millis)).await;
                                }
                                Ok(UnitReport::ok())
                            })
                        }),
                    )
                    .await?;
                ran += u64::from(did.ran);
            }
            Ok(Outcome::Completed(Some(
                json!({"units": units, "ranThisAttempt": ran}),
            )))
        })
    }
}

/// A prune job's `retentionDays` (default 7, at most ten years).
fn retention_days(ctx: &JobContext) -> i32 {
    ctx.payload()["retentionDays"]
        .as_i64()
        .map_or(7, |d| d.clamp(0, 3650))
        .try_into()
        .unwrap_or(7)
}

/// `progress.prune_queue` `{retentionDays}` (default 7): deletes finished
/// queue rows (`done`, `dead`) older than that, with their units, in batches.
/// Progress records stay: clients may still read them.
pub struct PruneQueue;

/// Rows one prune statement deletes at most (short transactions).
const PRUNE_BATCH: i64 = 5_000;

impl JobHandler for PruneQueue {
    fn kind(&self) -> &'static str {
        "progress.prune_queue"
    }
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let days = retention_days(ctx);
            let mut conn = ctx.db.conn().await?;
            let mut deleted = 0usize;
            loop {
                let batch = diesel::sql_query(
                    "DELETE FROM job_queue WHERE id IN ( \
                         SELECT id FROM job_queue \
                         WHERE status IN ('done', 'dead') \
                           AND updated_at < now() - make_interval(days => $1) \
                         LIMIT $2)",
                )
                .bind::<diesel::sql_types::Integer, _>(days)
                .bind::<diesel::sql_types::BigInt, _>(PRUNE_BATCH)
                .execute(&mut *conn)
                .await?;
                deleted += batch;
                if i64::try_from(batch).unwrap_or(0) < PRUNE_BATCH {
                    break;
                }
            }
            Ok(Outcome::Completed(Some(json!({"deleted": deleted}))))
        })
    }
}

/// `core.prune_outbox` `{retentionDays}` (default 7): deletes delivered and
/// dead outbox events older than that (`stoa_core::command::outbox_retention`);
/// pending ones stay, however old.
pub struct PruneOutbox;

impl JobHandler for PruneOutbox {
    fn kind(&self) -> &'static str {
        "core.prune_outbox"
    }
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let mut conn = ctx.db.conn().await?;
            let deleted =
                stoa_core::command::outbox_retention::prune(&mut conn, retention_days(ctx)).await?;
            Ok(Outcome::Completed(Some(json!({"deleted": deleted}))))
        })
    }
}

/// How often the queue's recurring jobs run.
pub const PRUNE_QUEUE_EVERY: Duration = Duration::from_secs(3600);
pub const PRUNE_OUTBOX_EVERY: Duration = Duration::from_secs(3600);

/// The queue's recurring jobs. `progress.prune_queue` keeps the name it had
/// when the queue lived in stoa-progress: schedules are rows keyed by name
/// (and their runs by kind), so a renamed one would leave the old row
/// enqueueing runs no handler claims in every existing database.
pub fn schedules() -> Vec<Schedule> {
    vec![
        Schedule::new(
            "progress.prune_queue",
            "progress.prune_queue",
            PRUNE_QUEUE_EVERY,
        )
        .payload(json!({"retentionDays": 7})),
        Schedule::new("core.prune_outbox", "core.prune_outbox", PRUNE_OUTBOX_EVERY)
            .payload(json!({"retentionDays": 7})),
    ]
}
