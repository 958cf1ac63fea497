//! The progress module's recurring job: failing records whose worker went
//! silent, in every tenant.

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_jobs::{JobContext, JobError, JobHandler, Outcome, Schedule};

use crate::service;

/// `progress.sweep_stale`: fails progress records of every tenant whose worker
/// went silent (see [`service::sweep_stale`]), so they stop looking alive
/// even when nobody opens `GET /progress/active`.
pub struct SweepStale;

impl JobHandler for SweepStale {
    fn kind(&self) -> &'static str {
        "progress.sweep_stale"
    }
    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let mut conn = ctx.db.conn().await?;
            let failed = service::sweep_stale_everywhere(&mut conn).await?;
            Ok(Outcome::Completed(Some(json!({"failed": failed}))))
        })
    }
}

/// How often [`SweepStale`] runs.
pub const SWEEP_STALE_EVERY: Duration = Duration::from_secs(60);

/// The progress module's recurring jobs.
pub fn schedules() -> Vec<Schedule> {
    vec![Schedule::new(
        "progress.sweep_stale",
        "progress.sweep_stale",
        SWEEP_STALE_EVERY,
    )]
}
