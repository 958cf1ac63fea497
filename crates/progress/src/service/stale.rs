//! Jobs whose worker stopped sending heartbeats are failed.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::progress_jobs;

/// Running jobs without a heartbeat for 60 s, and pending jobs never started
/// within 900 s, are failed (run before answering `GET /progress/active`).
/// Running jobs without a heartbeat for 60 s, and pending jobs never started
/// within 900 s, are failed (run before answering `GET /progress/active`).
pub async fn sweep_stale(conn: &mut AsyncPgConnection, tenant: Uuid) -> QueryResult<usize> {
    let now = OffsetDateTime::now_utc();
    let silent = diesel::update(
        progress_jobs::table
            .filter(progress_jobs::tenant_id.eq(tenant))
            .filter(progress_jobs::status.eq("running"))
            .filter(
                progress_jobs::heartbeat_at
                    .lt(now - time::Duration::seconds(60))
                    .or(progress_jobs::heartbeat_at
                        .is_null()
                        .and(progress_jobs::started_at.lt(now - time::Duration::seconds(60)))),
            ),
    )
    .set((
        progress_jobs::status.eq("failed"),
        progress_jobs::finished_at.eq(now),
        progress_jobs::error_message.eq("Job stale: no heartbeat for 60 seconds"),
    ))
    .execute(conn)
    .await?;
    let unstarted = diesel::update(
        progress_jobs::table
            .filter(progress_jobs::tenant_id.eq(tenant))
            .filter(progress_jobs::status.eq("pending"))
            .filter(progress_jobs::created_at.lt(now - time::Duration::seconds(900))),
    )
    .set((
        progress_jobs::status.eq("failed"),
        progress_jobs::finished_at.eq(now),
        progress_jobs::error_message.eq("Job stale: never started within 900 seconds"),
    ))
    .execute(conn)
    .await?;
    Ok(silent + unstarted)
}

/// [`sweep_stale`] for every tenant with pending or running records (the
/// recurring `progress.sweep_stale` job); returns how many it failed.
pub async fn sweep_stale_everywhere(conn: &mut AsyncPgConnection) -> QueryResult<usize> {
    let tenants: Vec<Uuid> = progress_jobs::table
        .filter(progress_jobs::status.eq_any(["pending", "running"]))
        .select(progress_jobs::tenant_id)
        .distinct()
        .load(conn)
        .await?;
    let mut failed = 0;
    for tenant in tenants {
        failed += sweep_stale(conn, tenant).await?;
    }
    Ok(failed)
}
