//! stoa-jobs: the Postgres job queue, its units and recurring jobs, and the
//! workers that run them (inside `stoa serve`, or as `stoa worker`
//! processes). Infrastructure beside stoa-core: it depends on core and acl
//! (the caller's scope, the creator it re-authorizes) and on no module; the
//! records clients poll are reached through [`JobRecords`]. See README.md.
#![doc = include_str!("../README.md")]

pub mod enqueue;
pub mod error;
pub mod queue;
pub mod records;
pub mod schedules;
pub mod schema;
pub mod system_jobs;
pub mod units;

use std::sync::Arc;

/// The future a [`JobHandler`] returns.
pub use futures_util::future::BoxFuture;

pub use enqueue::{
    DEFAULT_MAX_ATTEMPTS, Enqueued, JobScope, JobSpec, Queued, enqueue, enqueue_job,
    enqueue_recorded,
};
pub use error::JobsError;
pub use queue::{Job, JobHandler, Outcome, WorkerConfig, Workers, wake_workers};
pub use records::{JobRecords, NewRecord, NoRecords};
pub use schedules::Schedule;
pub use units::{FailedItem, JobContext, JobError, UnitError, UnitReport, UnitRun};

/// The queue's own job handlers (a diagnostic job, the queue and outbox
/// prunes); modules append theirs in the server.
pub fn handlers() -> Vec<Arc<dyn JobHandler>> {
    vec![
        Arc::new(system_jobs::SleepUnits),
        Arc::new(system_jobs::PruneQueue),
        Arc::new(system_jobs::PruneOutbox),
    ]
}

/// The queue's recurring jobs (modules append theirs in the server).
pub fn schedules() -> Vec<Schedule> {
    system_jobs::schedules()
}

/// The queue's migrations (`job_queue`, `job_units`, `job_schedules`): the
/// `migrations/` folders named `<version>_jobs_<what>`.
pub fn migrations() -> stoa_core::db::Migrations {
    stoa_core::db::Migrations::module("jobs")
}
