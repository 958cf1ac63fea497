//! Cancelling a job: at once while it is queued, by request while it runs
//! (the worker checks between units).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::progress_jobs;

use super::{ProgressJob, transition};

/// Outcome of a cancel request.
#[derive(Debug, PartialEq, Eq)]
pub enum Cancel {
    /// Pending: cancelled at once.
    Cancelled,
    /// Running: the worker will stop at its next check.
    Requested,
    /// Already finished: nothing to do.
    Terminal,
    /// The job cannot be cancelled.
    NotCancellable,
}

pub async fn cancel(
    conn: &mut AsyncPgConnection,
    job: &ProgressJob,
    by: Option<Uuid>,
) -> QueryResult<Cancel> {
    let id = job.id;
    match job.status.as_str() {
        "completed" | "failed" | "cancelled" => Ok(Cancel::Terminal),
        _ if !job.cancellable => Ok(Cancel::NotCancellable),
        "pending" => {
            transition(conn, id, "cancelled", by, move |conn| {
                Box::pin(async move {
                    let row = progress_jobs::table.filter(progress_jobs::id.eq(id));
                    diesel::update(row.filter(progress_jobs::status.eq("pending")))
                        .set((
                            progress_jobs::status.eq("cancelled"),
                            progress_jobs::finished_at.eq(OffsetDateTime::now_utc()),
                            progress_jobs::eta_seconds.eq(0),
                            progress_jobs::cancelled_by_user_id.eq(by),
                        ))
                        .execute(conn)
                        .await
                })
            })
            .await?;
            Ok(Cancel::Cancelled)
        }
        _ => {
            transition(conn, id, "cancel_requested", by, move |conn| {
                Box::pin(async move {
                    let row = progress_jobs::table.filter(progress_jobs::id.eq(id));
                    diesel::update(row)
                        .set((
                            progress_jobs::cancel_requested_at.eq(OffsetDateTime::now_utc()),
                            progress_jobs::cancelled_by_user_id.eq(by),
                        ))
                        .execute(conn)
                        .await
                })
            })
            .await?;
            Ok(Cancel::Requested)
        }
    }
}

/// Whether cancellation was requested (workers poll this between units).
pub async fn cancel_requested(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<bool> {
    let requested: Option<Option<OffsetDateTime>> = progress_jobs::table
        .filter(progress_jobs::id.eq(id))
        .select(progress_jobs::cancel_requested_at)
        .first(conn)
        .await
        .optional()?;
    Ok(requested.flatten().is_some())
}

pub async fn mark_cancelled(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<usize> {
    transition(conn, id, "cancelled", None, move |conn| {
        Box::pin(async move {
            diesel::update(
                progress_jobs::table
                    .filter(progress_jobs::id.eq(id))
                    .filter(progress_jobs::status.eq("running")),
            )
            .set((
                progress_jobs::status.eq("cancelled"),
                progress_jobs::finished_at.eq(OffsetDateTime::now_utc()),
                progress_jobs::eta_seconds.eq(0),
            ))
            .execute(conn)
            .await
        })
    })
    .await
}
