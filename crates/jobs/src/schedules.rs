//! Recurring jobs, enqueued once per period however many processes run.
//!
//! A schedule is a `job_schedules` row (name, kind, payload, period,
//! next_run_at). Every worker process runs [`enqueue_due`] each tick: one
//! statement that moves `next_run_at` of the due rows on and inserts their
//! runs into `job_queue`. Two processes racing for the same row serialize on
//! its lock; the second re-checks `next_run_at <= now()` after the first
//! committed and finds it no longer due, so each period enqueues exactly one
//! run. A run still queued or running when the next one falls due is not
//! doubled (a partial unique index on `job_queue.schedule`).

use std::time::Duration;

use diesel::pg::data_types::PgInterval;
use diesel::sql_types::{Interval, Jsonb, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_core::prepared::Cached;

/// Attempts a recurring run gets (the next period runs it anyway).
const RUN_ATTEMPTS: i32 = 3;

/// A recurring job: `kind` with `payload` every `period`.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Unique across the deployment (`<module>.<what>`).
    pub name: &'static str,
    pub kind: &'static str,
    pub payload: Value,
    pub period: Duration,
}

impl Schedule {
    pub fn new(name: &'static str, kind: &'static str, period: Duration) -> Self {
        Self {
            name,
            kind,
            payload: Value::Object(serde_json::Map::new()),
            period,
        }
    }

    pub fn payload(mut self, payload: Value) -> Self {
        self.payload = payload;
        self
    }

    fn interval(&self) -> PgInterval {
        let micros = i64::try_from(self.period.as_micros()).unwrap_or(i64::MAX);
        PgInterval::from_microseconds(micros.max(1))
    }
}

/// Creates or updates the schedules. An existing schedule keeps its next run
/// (brought forward when the new period is shorter), so restarts and several
/// processes registering at once never add runs.
pub async fn register(
    conn: &mut AsyncPgConnection,
    schedules: &[Schedule],
) -> diesel::QueryResult<()> {
    for schedule in schedules {
        Cached(
            diesel::sql_query(
                "INSERT INTO job_schedules (name, kind, payload, period) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, payload = excluded.payload, \
                     period = excluded.period, \
                     next_run_at = LEAST(job_schedules.next_run_at, now() + excluded.period) \
                 WHERE (job_schedules.kind, job_schedules.payload, job_schedules.period) \
                     IS DISTINCT FROM (excluded.kind, excluded.payload, excluded.period)",
            )
            .bind::<Text, _>(schedule.name)
            .bind::<Text, _>(schedule.kind)
            .bind::<Jsonb, _>(&schedule.payload)
            .bind::<Interval, _>(schedule.interval()),
        )
        .execute(conn)
        .await?;
    }
    Ok(())
}

/// Enqueues one run of every due schedule and moves it to its next period;
/// returns how many runs were enqueued.
pub async fn enqueue_due(conn: &mut AsyncPgConnection) -> diesel::QueryResult<usize> {
    Cached(
        diesel::sql_query(
            "WITH due AS ( \
                 UPDATE job_schedules SET next_run_at = now() + period, last_run_at = now() \
                 WHERE next_run_at <= now() \
                 RETURNING name, kind, payload) \
             INSERT INTO job_queue (kind, payload, max_attempts, schedule) \
             SELECT kind, payload, $1, name FROM due \
             ON CONFLICT DO NOTHING",
        )
        .bind::<diesel::sql_types::Integer, _>(RUN_ATTEMPTS),
    )
    .execute(conn)
    .await
}
