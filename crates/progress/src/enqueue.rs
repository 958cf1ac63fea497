//! Queueing a job with a progress record, inside the caller's transaction.
//!
//! [`enqueue_job`] is what a module's route calls after it authorized a bulk
//! request: on the route's connection it creates the progress record clients
//! poll and the queue row a worker claims (`stoa_jobs::enqueue_recorded` with
//! [`ProgressRecords`]), so both exist only if the change that asked for them
//! commits. The job keeps the caller's scope (`stoa_jobs::JobScope`).

use diesel_async::AsyncPgConnection;
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_jobs::{JobScope, JobSpec, Queued, enqueue_recorded};

use crate::records::ProgressRecords;

/// Creates the progress record (`pending`, `totalCount = items_total`) and
/// enqueues job `kind` for it, in the caller's scope, on `conn`.
pub async fn enqueue_job(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    kind: &str,
    payload: Value,
    items_total: usize,
) -> Result<Queued, AppError> {
    enqueue_job_with(conn, ctx, JobSpec::new(kind, payload, items_total)).await
}

/// [`enqueue_job`] with a name, description, meta, cancellability and attempts.
/// A caller without a tenant gets 403 and nothing is created.
pub async fn enqueue_job_with(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    spec: JobSpec,
) -> Result<Queued, AppError> {
    let scope = JobScope::of(ctx)?;
    enqueue_scoped(conn, &scope, spec).await
}

/// [`enqueue_job_with`] for a scope the caller already resolved (a job that
/// enqueues follow-up work in its own scope).
pub async fn enqueue_scoped(
    conn: &mut AsyncPgConnection,
    scope: &JobScope,
    spec: JobSpec,
) -> Result<Queued, AppError> {
    enqueue_recorded(conn, &ProgressRecords, scope, spec).await
}
