//! The Postgres job queue and its workers.
//!
//! A module enqueues a job in its own transaction ([`enqueue`]); a worker
//! claims it with `FOR UPDATE SKIP LOCKED` and a lease (`locked_until`, the
//! visibility timeout) that a heartbeat extends while the handler runs. A worker
//! that dies (even `kill -9`) stops extending the lease; once it lapses another
//! worker claims the job again. Handlers split their work into units
//! ([`JobContext::unit`]): a unit's effects and its `job_units` row commit in one
//! transaction, so a retry skips exactly the finished units and never applies one
//! twice. Failures are retried with exponential back-off up to `max_attempts`,
//! then the job is `dead` and its progress record `failed`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use diesel::dsl::now;
use diesel::pg::data_types::PgInterval;
use diesel::prelude::*;
use diesel::sql_types::{Integer, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::Value;
use stoa_core::AppError;
use stoa_core::db::{Db, DbError};
use stoa_core::prepared::Cached;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::{job_queue, job_units};
use crate::service;

/// Adds a job to the queue on `conn` (the caller's transaction).
pub async fn enqueue(
    conn: &mut AsyncPgConnection,
    kind: &str,
    payload: &Value,
    progress_job: Option<Uuid>,
    max_attempts: i32,
) -> QueryResult<Uuid> {
    diesel::insert_into(job_queue::table)
        .values((
            job_queue::kind.eq(kind),
            job_queue::payload.eq(payload),
            job_queue::progress_job_id.eq(progress_job),
            job_queue::max_attempts.eq(max_attempts.max(1)),
        ))
        .returning(job_queue::id)
        .get_result(conn)
        .await
}

/// `now() + <lease>`: the end of a lease, on the database clock like the
/// comparisons against it (diesel's `now` is typed `timestamp` and has no
/// `timestamptz` arithmetic). The interval is bound, so the SQL text never
/// changes and statements using it stay in the statement cache.
#[derive(Debug, Clone, Copy)]
struct LeaseEnd(PgInterval);

impl diesel::query_builder::QueryId for LeaseEnd {
    type QueryId = LeaseEnd;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<GB> diesel::expression::ValidGrouping<GB> for LeaseEnd {
    type IsAggregate = diesel::expression::is_aggregate::Never;
}

impl diesel::expression::Expression for LeaseEnd {
    type SqlType = diesel::sql_types::Timestamptz;
}

impl<QS> diesel::expression::SelectableExpression<QS> for LeaseEnd {}

impl<QS> diesel::expression::AppearsOnTable<QS> for LeaseEnd {}

impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for LeaseEnd {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        out.push_sql("now() + ");
        out.push_bind_param::<diesel::sql_types::Interval, _>(&self.0)
    }
}

/// A claimed job.
#[derive(Clone, Debug, Queryable, QueryableByName)]
pub struct Job {
    #[diesel(sql_type = SqlUuid)]
    pub id: Uuid,
    #[diesel(sql_type = Text)]
    pub kind: String,
    #[diesel(sql_type = Jsonb)]
    pub payload: Value,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub progress_job_id: Option<Uuid>,
    #[diesel(sql_type = Integer)]
    pub attempts: i32,
    #[diesel(sql_type = Integer)]
    pub max_attempts: i32,
}

/// What a handler gets: the job and helpers for units, progress and cancellation.
pub struct JobContext {
    pub db: Db,
    pub job: Job,
}

type UnitFn<'c> = Box<
    dyn for<'r> FnOnce(&'r mut AsyncPgConnection) -> BoxFuture<'r, Result<(), AppError>>
        + Send
        + 'c,
>;

impl JobContext {
    pub fn payload(&self) -> &Value {
        &self.job.payload
    }

    /// Runs unit `key` unless an earlier attempt finished it. Its effects, its
    /// `job_units` row and the progress count commit together. Returns whether
    /// the unit ran now.
    pub async fn unit<'c>(&self, key: &str, f: UnitFn<'c>) -> Result<bool, AppError> {
        let job = self.job.id;
        let progress = self.job.progress_job_id;
        let key = key.to_string();
        let mut conn = self.db.conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction::<_, AppError, _>(async move |conn| {
            let fresh = diesel::insert_into(job_units::table)
                .values((job_units::job_id.eq(job), job_units::unit.eq(&key)))
                .on_conflict_do_nothing()
                .execute(conn)
                .await?;
            if fresh == 0 {
                return Ok(false);
            }
            f(conn).await?;
            if let Some(progress) = progress {
                let done: i64 = job_units::table
                    .filter(job_units::job_id.eq(job))
                    .count()
                    .get_result(conn)
                    .await?;
                service::set_processed(conn, progress, i32::try_from(done).unwrap_or(i32::MAX))
                    .await?;
            }
            Ok(true)
        })
        .await
    }

    /// Whether someone asked to cancel the job's progress record.
    pub async fn cancel_requested(&self) -> bool {
        let Some(progress) = self.job.progress_job_id else {
            return false;
        };
        match self.db.conn().await {
            Ok(mut conn) => service::cancel_requested(&mut conn, progress)
                .await
                .unwrap_or(false),
            Err(_) => false,
        }
    }
}

/// How a handler's run ended.
pub enum Outcome {
    /// Done; the summary goes to the progress record.
    Completed(Option<Value>),
    /// Stopped because cancellation was requested.
    Cancelled,
}

/// Runs jobs of one kind.
pub trait JobHandler: Send + Sync {
    fn kind(&self) -> &'static str;
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, String>>;
}

/// Worker settings (`STOA_WORKERS`, `STOA_JOB_VISIBILITY_SECS`, `STOA_JOB_POLL_MS`).
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    pub count: usize,
    pub visibility: Duration,
    pub poll: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            count: 1,
            visibility: Duration::from_secs(30),
            poll: Duration::from_millis(500),
        }
    }
}

impl WorkerConfig {
    pub fn from_env() -> Result<Self, stoa_core::config::ConfigError> {
        let vars = std::env::vars().collect();
        let env = stoa_core::config::Env(&vars);
        let d = Self::default();
        let visibility: u64 = env.parse_or("STOA_JOB_VISIBILITY_SECS", d.visibility.as_secs())?;
        let poll: u64 = env.parse_or("STOA_JOB_POLL_MS", 500u64)?;
        Ok(Self {
            count: env.parse_or("STOA_WORKERS", d.count)?,
            visibility: Duration::from_secs(visibility.max(1)),
            poll: Duration::from_millis(poll.max(10)),
        })
    }
}

/// The queue's consumers.
pub struct Workers {
    db: Db,
    handlers: HashMap<&'static str, Arc<dyn JobHandler>>,
    config: WorkerConfig,
    name: String,
}

/// Delay before the next attempt: 2^attempts seconds, at most 10 minutes.
pub fn backoff(attempts: i32) -> Duration {
    Duration::from_secs(1u64 << attempts.clamp(0, 10)).min(Duration::from_secs(600))
}

impl Workers {
    pub fn new(db: Db, handlers: Vec<Arc<dyn JobHandler>>, config: WorkerConfig) -> Self {
        Self {
            db,
            handlers: handlers.into_iter().map(|h| (h.kind(), h)).collect(),
            config,
            name: format!("{}-{}", std::process::id(), Uuid::new_v4().simple()),
        }
    }

    /// Claims the next due job (queued, or running with a lapsed lease). Every
    /// idle worker runs this each poll, so the statement is built with diesel's
    /// query builder and kept prepared ([`Cached`]): Postgres parses and plans it
    /// once per connection instead of on every poll.
    pub async fn claim(&self) -> Result<Option<Job>, DbError> {
        let mut conn = self.db.conn().await?;
        let kinds: Vec<&str> = self.handlers.keys().copied().collect();
        // The candidate row is picked by a sub-select over an alias: diesel
        // cannot nest a query of a table inside a statement on that same table.
        let due = diesel::alias!(job_queue as due);
        let candidate = due
            .select(due.field(job_queue::id))
            .filter(due.field(job_queue::kind).eq_any(kinds))
            .filter(
                due.field(job_queue::status)
                    .eq("queued")
                    .and(due.field(job_queue::run_after).le(now))
                    .or(due
                        .field(job_queue::status)
                        .eq("running")
                        .and(due.field(job_queue::locked_until).lt(now))),
            )
            .order((
                due.field(job_queue::run_after).asc(),
                due.field(job_queue::created_at).asc(),
            ))
            .limit(1)
            .for_update()
            .skip_locked();
        let claim = diesel::update(job_queue::table.filter(job_queue::id.eq_any(candidate)))
            .set((
                job_queue::status.eq("running"),
                job_queue::attempts.eq(job_queue::attempts + 1),
                job_queue::locked_until.eq(self.lease().nullable()),
                job_queue::locked_by.eq(&self.name),
            ))
            .returning((
                job_queue::id,
                job_queue::kind,
                job_queue::payload,
                job_queue::progress_job_id,
                job_queue::attempts,
                job_queue::max_attempts,
            ));
        let job = Cached(claim)
            .get_result::<Job>(&mut *conn)
            .await
            .optional()?;
        Ok(job)
    }

    /// The end of a lease taken now: `now()` plus the visibility timeout.
    fn lease(&self) -> LeaseEnd {
        let micros = i64::try_from(self.config.visibility.as_micros()).unwrap_or(30_000_000);
        LeaseEnd(PgInterval::from_microseconds(micros))
    }

    /// Claims and runs one job; `Ok(false)` when none was due.
    pub async fn run_one(&self) -> Result<bool, DbError> {
        let Some(job) = self.claim().await? else {
            return Ok(false);
        };
        let Some(handler) = self.handlers.get(job.kind.as_str()).cloned() else {
            return Ok(true);
        };
        if job.attempts > job.max_attempts {
            self.finish_failed(&job, "too many attempts", true).await?;
            return Ok(true);
        }
        if let Some(progress) = job.progress_job_id {
            let mut conn = self.db.conn().await?;
            service::start(&mut conn, progress).await?;
        }
        let ctx = JobContext {
            db: self.db.clone(),
            job: job.clone(),
        };
        let outcome = {
            let run = handler.run(&ctx);
            tokio::pin!(run);
            let mut beat = tokio::time::interval(self.config.visibility / 3);
            beat.tick().await;
            loop {
                tokio::select! {
                    outcome = &mut run => break outcome,
                    _ = beat.tick() => self.heartbeat(&job).await,
                }
            }
        };
        let mut conn = self.db.conn().await?;
        match outcome {
            Ok(Outcome::Completed(summary)) => {
                self.release(&mut conn, &job, "done", None, None).await?;
                if let Some(progress) = job.progress_job_id {
                    service::complete(&mut conn, progress, summary).await?;
                }
            }
            Ok(Outcome::Cancelled) => {
                self.release(&mut conn, &job, "done", None, None).await?;
                if let Some(progress) = job.progress_job_id {
                    service::mark_cancelled(&mut conn, progress).await?;
                }
            }
            Err(error) => {
                drop(conn);
                let last = job.attempts >= job.max_attempts;
                self.finish_failed(&job, &error, last).await?;
            }
        }
        Ok(true)
    }

    async fn heartbeat(&self, job: &Job) {
        let Ok(mut conn) = self.db.conn().await else {
            return;
        };
        let extend = diesel::update(
            job_queue::table
                .filter(job_queue::id.eq(job.id))
                .filter(job_queue::locked_by.eq(&self.name))
                .filter(job_queue::status.eq("running")),
        )
        .set(job_queue::locked_until.eq(self.lease().nullable()));
        let extended = Cached(extend).execute(&mut *conn).await;
        if let Err(err) = extended {
            tracing::warn!(job = %job.id, error = %err, "job heartbeat failed");
        }
        if let Some(progress) = job.progress_job_id {
            let _ = service::heartbeat(&mut conn, progress).await;
        }
    }

    async fn release(
        &self,
        conn: &mut AsyncPgConnection,
        job: &Job,
        status: &str,
        run_after: Option<OffsetDateTime>,
        error: Option<&str>,
    ) -> Result<(), DbError> {
        diesel::update(job_queue::table.filter(job_queue::id.eq(job.id)))
            .set((
                job_queue::status.eq(status),
                job_queue::locked_until.eq(None::<OffsetDateTime>),
                job_queue::locked_by.eq(None::<String>),
                job_queue::run_after.eq(run_after.unwrap_or_else(OffsetDateTime::now_utc)),
                job_queue::last_error.eq(error),
            ))
            .execute(conn)
            .await?;
        Ok(())
    }

    async fn finish_failed(&self, job: &Job, error: &str, last: bool) -> Result<(), DbError> {
        let mut conn = self.db.conn().await?;
        tracing::warn!(job = %job.id, kind = %job.kind, attempts = job.attempts, last, error, "job failed");
        if last {
            self.release(&mut conn, job, "dead", None, Some(error))
                .await?;
            if let Some(progress) = job.progress_job_id {
                service::fail(&mut conn, progress, error).await?;
            }
        } else {
            let at = OffsetDateTime::now_utc() + backoff(job.attempts);
            self.release(&mut conn, job, "queued", Some(at), Some(error))
                .await?;
        }
        Ok(())
    }

    /// Runs forever: works while jobs are due, then polls.
    pub async fn run(self: Arc<Self>) {
        loop {
            match self.run_one().await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(err) => tracing::warn!(error = %err, "job queue unavailable"),
            }
            tokio::time::sleep(self.config.poll).await;
        }
    }
}

/// A diagnostic job: `{units: n, unitMillis: ms}` runs n units of ms each. Used
/// by the tests (a worker killed mid-job) and to check a deployment's workers.
pub struct SleepUnits;

impl JobHandler for SleepUnits {
    fn kind(&self) -> &'static str {
        "system.sleep_units"
    }
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, String>> {
        Box::pin(async move {
            let units = ctx.payload()["units"].as_u64().unwrap_or(1).min(100_000);
            let millis = ctx.payload()["unitMillis"]
                .as_u64()
                .unwrap_or(0)
                .min(60_000);
            let mut ran = 0u64;
            for i in 0..units {
                if ctx.cancel_requested().await {
                    return Ok(Outcome::Cancelled);
                }
                let did = ctx
                    .unit(
                        &i.to_string(),
                        Box::new(move |_conn| {
                            Box::pin(async move {
                                tokio::time::sleep(Duration::from_millis(millis)).await;
                                Ok(())
                            })
                        }),
                    )
                    .await
                    .map_err(|e| e.to_string())?;
                ran += u64::from(did);
            }
            Ok(Outcome::Completed(Some(
                serde_json::json!({"units": units, "ranThisAttempt": ran}),
            )))
        })
    }
}
