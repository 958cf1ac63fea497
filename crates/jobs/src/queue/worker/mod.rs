//! The workers of one process: claim (`FOR UPDATE SKIP LOCKED`), lease and
//! heartbeat, run, retry or bury, and the loop that keeps `STOA_WORKERS` jobs
//! in flight and enqueues due recurring jobs. One protocol, read together.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use diesel::dsl::now;
use diesel::pg::data_types::PgInterval;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use futures_util::stream::{FuturesUnordered, StreamExt};
use stoa_acl::Services;
use stoa_acl::accounts::CreatorResolver;
use stoa_core::command::WriteGuards;
use stoa_core::db::{Db, DbError};
use stoa_core::prepared::Cached;
use time::OffsetDateTime;
use uuid::Uuid;

use super::lease::LeaseEnd;
use super::{Job, JobHandler, Outcome, WorkerConfig, backoff};
use crate::records::{JobRecords, NoRecords};
use crate::schedules::{self, Schedule};
use crate::schema::job_queue;
use crate::units::{self, JobContext, JobError};

mod setup;

/// Rings when this process queued a job (see [`wake_workers`]).
static QUEUED: LazyLock<tokio::sync::Notify> = LazyLock::new(tokio::sync::Notify::new);

/// Tells this process's idle workers that a job was queued, so they claim it
/// now instead of at their next poll (up to `STOA_JOB_POLL_MS`, 500 ms,
/// later). Call it after the transaction that queued the job committed: a
/// worker woken earlier would not see the job yet. Workers of other
/// processes still find it by polling.
pub fn wake_workers() {
    // One stored permit: a worker between its claim and its wait still
    // wakes at once.
    QUEUED.notify_one();
}

/// The queue's consumers in one process.
pub struct Workers {
    db: Db,
    handlers: HashMap<&'static str, Arc<dyn JobHandler>>,
    schedules: Vec<Schedule>,
    config: WorkerConfig,
    name: String,
    /// What handlers re-resolve their job's creator with (from the module
    /// context, [`Workers::with_services`]).
    creators: Option<Arc<dyn CreatorResolver>>,
    guards: WriteGuards,
    /// Where the records clients poll are kept ([`Workers::with_records`]).
    records: Arc<dyn JobRecords>,
}

impl Workers {
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
                job_queue::tenant_id,
                job_queue::organization_id,
                job_queue::created_by_user_id,
                job_queue::created_by_api_key_id,
                job_queue::trace_parent,
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
        // Claiming and bookkeeping span tenants; the job itself runs in its
        // tenant (`run_job`).
        stoa_core::rls::bypass("job worker", async {
            let Some(job) = self.claim().await? else {
                return Ok(false);
            };
            self.run_job(job).await?;
            Ok(true)
        })
        .await
    }

    /// Runs a claimed job inside its span: a child of the request that
    /// queued it when traces are exported (a disabled span otherwise).
    async fn run_job(&self, job: Job) -> Result<(), DbError> {
        let span = stoa_core::traces::job_span(&job.kind, job.id, job.trace_parent.as_deref());
        tracing::Instrument::instrument(self.run_claimed(job), span).await
    }

    /// Runs a claimed job to its end: completed, cancelled, retried later or dead.
    async fn run_claimed(&self, job: Job) -> Result<(), DbError> {
        let Some(handler) = self.handlers.get(job.kind.as_str()).cloned() else {
            return Ok(());
        };
        if job.attempts > job.max_attempts {
            return self
                .finish_failed(&job, &JobError::fatal("too many attempts"))
                .await;
        }
        if let Some(progress) = job.progress_job_id {
            let mut conn = self.db.conn().await?;
            self.records.start(&mut conn, progress).await?;
        }
        let ctx = JobContext {
            db: self.db.clone(),
            job: job.clone(),
            creators: self.creators.clone(),
            guards: self.guards.clone(),
            records: self.records.clone(),
        };
        // The heartbeat is polled beside the handler, never instead of it: a
        // heartbeat waiting for a pooled connection must not stop the handler
        // from finishing a unit and returning its own.
        let outcome = {
            let beat = async {
                let mut every = tokio::time::interval(self.config.visibility / 3);
                every.tick().await;
                loop {
                    every.tick().await;
                    self.heartbeat(&job).await;
                }
            };
            // A tenant's job sees that tenant's rows only; a system job
            // (no tenant) works across tenants.
            let scope = match job.tenant_id {
                Some(tenant) => stoa_core::rls::Scope::Tenant(tenant),
                None => stoa_core::rls::bypass_scope("system job"),
            };
            tokio::select! {
                outcome = stoa_core::rls::within(scope, handler.run(&ctx)) => outcome,
                // The heartbeat loops forever; this arm only satisfies the types.
                () = beat => Err(JobError::retry("heartbeat stopped")),
            }
        };
        let mut conn = self.db.conn().await?;
        match outcome {
            Ok(Outcome::Completed(summary)) => {
                self.release(&mut conn, &job, "done", None, None).await?;
                if let Some(progress) = job.progress_job_id {
                    let (failed, count) = units::failed_items(&mut conn, job.id).await?;
                    let summary = units::with_failures(summary, &failed, count);
                    self.records.complete(&mut conn, progress, summary).await?;
                }
            }
            Ok(Outcome::Cancelled) => {
                self.release(&mut conn, &job, "done", None, None).await?;
                if let Some(progress) = job.progress_job_id {
                    self.records.cancelled(&mut conn, progress).await?;
                }
            }
            Err(error) => {
                drop(conn);
                self.finish_failed(&job, &error).await?;
            }
        }
        Ok(())
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
            tracing::warn!(job.id = %job.id, error = %err, "job heartbeat failed");
        }
        if let Some(progress) = job.progress_job_id {
            let _ = self.records.heartbeat(&mut conn, progress).await;
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

    /// A failed attempt: retried after [`backoff`], or dead when the error is
    /// final or no attempt is left.
    async fn finish_failed(&self, job: &Job, error: &JobError) -> Result<(), DbError> {
        let mut conn = self.db.conn().await?;
        let last = error.is_final() || job.attempts >= job.max_attempts;
        let message = error.message();
        tracing::warn!(
            job.id = %job.id,
            job.kind = %job.kind,
            job.attempts = job.attempts,
            job.last = last,
            error = message,
            "job failed"
        );
        if last {
            self.release(&mut conn, job, "dead", None, Some(message))
                .await?;
            if let Some(progress) = job.progress_job_id {
                let (failed, count) = units::failed_items(&mut conn, job.id).await?;
                let summary = (count > 0).then(|| units::with_failures(None, &failed, count));
                self.records
                    .fail(&mut conn, progress, message, summary.flatten())
                    .await?;
            }
        } else {
            let at = OffsetDateTime::now_utc() + backoff(job.attempts);
            self.release(&mut conn, job, "queued", Some(at), Some(message))
                .await?;
        }
        Ok(())
    }

    /// Enqueues the recurring jobs that are due; see [`schedules::enqueue_due`].
    pub async fn enqueue_due(&self) -> Result<usize, DbError> {
        let mut conn = self.db.conn().await?;
        Ok(schedules::enqueue_due(&mut conn).await?)
    }

    /// Registers this process's schedules (keeps their next run).
    pub async fn register_schedules(&self) -> Result<(), DbError> {
        if self.schedules.is_empty() {
            return Ok(());
        }
        let mut conn = self.db.conn().await?;
        schedules::register(&mut conn, &self.schedules).await?;
        Ok(())
    }

    /// Runs forever: keeps up to `count` jobs in flight, claims while a slot
    /// is free, polls when nothing is due, and enqueues due recurring jobs
    /// every `schedule_tick`.
    pub async fn run(self: Arc<Self>) {
        // Claiming and bookkeeping span tenants; each job runs in its tenant
        // (`run_job`).
        stoa_core::rls::bypass("job worker", self.run_loop()).await;
    }

    async fn run_loop(&self) {
        let slots = self.config.count.max(1);
        let mut registered = false;
        let mut next_tick = Instant::now();
        let mut running: FuturesUnordered<BoxFuture<'_, ()>> = FuturesUnordered::new();
        loop {
            if Instant::now() >= next_tick {
                next_tick = Instant::now() + self.config.schedule_tick;
                if !registered {
                    match self.register_schedules().await {
                        Ok(()) => registered = true,
                        Err(err) => tracing::warn!(error = %err, "job schedules unavailable"),
                    }
                }
                if let Err(err) = self.enqueue_due().await {
                    tracing::warn!(error = %err, "job schedules unavailable");
                }
            }
            while running.len() < slots {
                match self.claim().await {
                    Ok(Some(job)) => {
                        let this: &Workers = self;
                        running.push(Box::pin(async move {
                            let id = job.id;
                            if let Err(err) = this.run_job(job).await {
                                tracing::warn!(job.id = %id, error = %err, "job queue unavailable");
                            }
                        }));
                    }
                    Ok(None) => break,
                    Err(err) => {
                        tracing::warn!(error = %err, "job queue unavailable");
                        break;
                    }
                }
            }
            let wait = self
                .config
                .poll
                .min(next_tick.saturating_duration_since(Instant::now()));
            // A finished job, a job queued by this process (while a slot is
            // free) or the poll, whichever comes first.
            tokio::select! {
                _ = running.next(), if !running.is_empty() => {}
                () = QUEUED.notified(), if running.len() < slots => {}
                () = tokio::time::sleep(wait) => {}
            }
        }
    }
}
