//! The Postgres job queue and its workers.
//!
//! A module enqueues a job in its own transaction ([`crate::enqueue_recorded`]); a
//! worker claims it with `FOR UPDATE SKIP LOCKED` and a lease (`locked_until`,
//! the visibility timeout) that a heartbeat extends while the handler runs. A
//! worker that dies (even `kill -9`) stops extending the lease; once it lapses
//! another worker claims the job again. Handlers split their work into units
//! ([`crate::JobContext::unit`], see `units/`). A [`JobError::Retry`] is
//! retried with exponential back-off up to `max_attempts`; a
//! [`JobError::Final`] (or the last attempt) leaves the job `dead` and its
//! progress record `failed`.
//!
//! One [`Workers`] per process runs up to `STOA_WORKERS` jobs at once
//! ([`Workers::run`]): a single loop claims while a slot is free, so an idle
//! process costs one claim per poll however many slots it has. The same loop
//! enqueues due recurring jobs (`schedules.rs`).
//!
//! The protocol (claim, lease, heartbeat, retry and the worker loop) reads
//! top to bottom in `worker.rs`; `lease.rs` is the lease expression it binds.

mod lease;
mod worker;

use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::{Integer, Jsonb, Nullable, Text, Uuid as SqlUuid};
use futures_util::future::BoxFuture;
use serde_json::Value;
use uuid::Uuid;

use crate::enqueue::JobScope;
use crate::units::{JobContext, JobError};

pub use worker::{Workers, wake_workers};

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
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub tenant_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub organization_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub created_by_user_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub created_by_api_key_id: Option<Uuid>,
    /// The `traceparent` of the request that queued the job, when traces
    /// were exported then (stoa_core::traces): the job's spans join its trace.
    #[diesel(sql_type = Nullable<diesel::sql_types::Text>)]
    pub trace_parent: Option<String>,
}

impl Job {
    /// The scope the job was enqueued in (`None`: a system job).
    pub fn scope(&self) -> Option<JobScope> {
        self.tenant_id.map(|tenant_id| JobScope {
            tenant_id,
            organization_id: self.organization_id,
            user_id: self.created_by_user_id,
            api_key_id: self.created_by_api_key_id,
        })
    }
}

/// How a handler's run ended.
pub enum Outcome {
    /// Done; the summary goes to the progress record (with `failedCount` and
    /// `failedItems` added when it is an object or `None`).
    Completed(Option<Value>),
    /// Stopped because cancellation was requested.
    Cancelled,
}

/// Runs jobs of one kind.
pub trait JobHandler: Send + Sync {
    fn kind(&self) -> &'static str;
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>>;
}

/// Worker settings (`STOA_WORKERS`, `STOA_JOB_VISIBILITY_SECS`,
/// `STOA_JOB_POLL_MS`, `STOA_JOB_SCHEDULE_MS`).
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Jobs in flight at once in this process.
    pub count: usize,
    pub visibility: Duration,
    pub poll: Duration,
    /// How often the process looks for due recurring jobs.
    pub schedule_tick: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            count: 2,
            visibility: Duration::from_secs(30),
            poll: Duration::from_millis(500),
            schedule_tick: Duration::from_secs(1),
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
        let tick: u64 = env.parse_or("STOA_JOB_SCHEDULE_MS", 1000u64)?;
        Ok(Self {
            count: env.parse_or("STOA_WORKERS", d.count)?,
            visibility: Duration::from_secs(visibility.max(1)),
            poll: Duration::from_millis(poll.max(10)),
            schedule_tick: Duration::from_millis(tick.max(10)),
        })
    }
}

/// Delay before the next attempt: 2^attempts seconds, at most 10 minutes.
pub fn backoff(attempts: i32) -> Duration {
    Duration::from_secs(1u64 << attempts.clamp(0, 10)).min(Duration::from_secs(600))
}
