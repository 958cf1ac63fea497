//! Progress records and their status transitions (every transition is a
//! status-guarded update, so concurrent writers cannot move a job backwards).
//!
//! Transitions emit domain events through the outbox, in the transition's
//! own transaction (a savepoint inside the caller's): `progress.job.created`,
//! `.completed`, `.failed`, `.cancelled` and `.cancel_requested`, payload
//! `{id, jobType, status}`, envelope with the job's tenant, organization
//! and the user who acted (`source: "system"` for the worker's transitions).

mod cancel;
mod stale;

pub use cancel::{Cancel, cancel, cancel_requested, mark_cancelled};
pub use stale::{sweep_stale, sweep_stale_everywhere};

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use serde_json::{Value, json};
use stoa_core::command::Event;
use stoa_core::command::outbox::{self, Envelope, EventActor, Origin};
use stoa_core::prepared::Cached;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::schema::progress_jobs;

#[derive(Clone, Debug, Queryable, Selectable, Serialize, ToSchema)]
#[diesel(table_name = progress_jobs)]
#[serde(rename_all = "camelCase")]
pub struct ProgressJob {
    pub id: Uuid,
    pub job_type: String,
    pub name: String,
    pub description: Option<String>,
    pub status: String,
    pub progress_percent: i16,
    pub processed_count: i32,
    pub total_count: Option<i32>,
    pub eta_seconds: Option<i32>,
    pub started_by_user_id: Option<Uuid>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub started_at: Option<OffsetDateTime>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub heartbeat_at: Option<OffsetDateTime>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub finished_at: Option<OffsetDateTime>,
    pub result_summary: Option<Value>,
    pub error_message: Option<String>,
    pub meta: Option<Value>,
    pub cancellable: bool,
    pub parent_job_id: Option<Uuid>,
    pub partition_index: Option<i32>,
    pub partition_count: Option<i32>,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

/// A new progress record.
#[derive(Clone, Debug, Default)]
pub struct NewJob {
    pub job_type: String,
    pub name: String,
    pub description: Option<String>,
    pub total_count: Option<i32>,
    pub cancellable: bool,
    pub meta: Option<Value>,
    pub parent_job_id: Option<Uuid>,
    pub partition_index: Option<i32>,
    pub partition_count: Option<i32>,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub started_by_user_id: Option<Uuid>,
}

/// The kind progress events name as their resource.
pub const JOB_KIND: &str = "progress.job";

/// Writes `progress.job.<verb>` for job `id` to the outbox, on `conn`.
/// `actor`: the user who acted (`None`: the worker, as `system`).
async fn emit(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    verb: &str,
    actor: Option<Uuid>,
) -> QueryResult<()> {
    let Some(job) = get(conn, id).await? else {
        return Ok(());
    };
    let envelope = Envelope {
        origin: Origin::module("progress"),
        tenant_id: Some(job.tenant_id),
        organization_id: job.organization_id,
        actor: EventActor {
            user_id: actor,
            source: Some(if actor.is_some() { "api" } else { "system" }.into()),
        },
        command_id: None,
        action_log_id: None,
        resource_kind: Some(JOB_KIND.into()),
        resource_id: Some(id.to_string()),
    };
    let event = Event::new(
        format!("progress.job.{verb}"),
        json!({"id": id, "jobType": job.job_type, "status": job.status}),
    );
    outbox::enqueue(conn, &event, &envelope).await
}

/// Runs `change` and, when it changed a row, emits `verb` for `id`: both in
/// one transaction (a savepoint inside the caller's).
async fn transition<F>(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    verb: &'static str,
    actor: Option<Uuid>,
    change: F,
) -> QueryResult<usize>
where
    F: for<'c> FnOnce(
            &'c mut AsyncPgConnection,
        ) -> futures_util::future::BoxFuture<'c, QueryResult<usize>>
        + Send,
{
    conn.transaction(async move |conn| {
        let changed = change(conn).await?;
        if changed > 0 {
            emit(conn, id, verb, actor).await?;
        }
        Ok(changed)
    })
    .await
}

pub async fn create(conn: &mut AsyncPgConnection, job: &NewJob) -> QueryResult<Uuid> {
    let started_by = job.started_by_user_id;
    let id = conn
        .transaction(async move |conn| {
            let id = insert(conn, job).await?;
            emit(conn, id, "created", started_by).await?;
            Ok::<_, diesel::result::Error>(id)
        })
        .await?;
    Ok(id)
}

async fn insert(conn: &mut AsyncPgConnection, job: &NewJob) -> QueryResult<Uuid> {
    diesel::insert_into(progress_jobs::table)
        .values((
            progress_jobs::job_type.eq(&job.job_type),
            progress_jobs::name.eq(&job.name),
            progress_jobs::description.eq(&job.description),
            progress_jobs::total_count.eq(job.total_count),
            progress_jobs::cancellable.eq(job.cancellable),
            progress_jobs::meta.eq(&job.meta),
            progress_jobs::parent_job_id.eq(job.parent_job_id),
            progress_jobs::partition_index.eq(job.partition_index),
            progress_jobs::partition_count.eq(job.partition_count),
            progress_jobs::tenant_id.eq(job.tenant_id),
            progress_jobs::organization_id.eq(job.organization_id),
            progress_jobs::started_by_user_id.eq(job.started_by_user_id),
        ))
        .returning(progress_jobs::id)
        .get_result(conn)
        .await
}

pub async fn get(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<Option<ProgressJob>> {
    progress_jobs::table
        .filter(progress_jobs::id.eq(id))
        .select(ProgressJob::as_select())
        .first(conn)
        .await
        .optional()
}

/// pending|failed → running.
pub async fn start(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<usize> {
    let now = OffsetDateTime::now_utc();
    diesel::update(
        progress_jobs::table
            .filter(progress_jobs::id.eq(id))
            .filter(progress_jobs::status.eq_any(["pending", "failed", "running"])),
    )
    .set((
        progress_jobs::status.eq("running"),
        progress_jobs::started_at.eq(now),
        progress_jobs::heartbeat_at.eq(now),
        progress_jobs::finished_at.eq(None::<OffsetDateTime>),
        progress_jobs::error_message.eq(None::<String>),
    ))
    .execute(conn)
    .await
}

/// Sets the processed count (and derived percent/ETA) of a pending or running job.
pub async fn set_processed(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    processed: i32,
) -> QueryResult<usize> {
    let Some(job) = get(conn, id).await? else {
        return Ok(0);
    };
    if !matches!(job.status.as_str(), "pending" | "running") {
        return Ok(0);
    }
    let now = OffsetDateTime::now_utc();
    let percent = percent(processed, job.total_count).unwrap_or(job.progress_percent);
    let eta = match (job.started_at, job.total_count) {
        (Some(started), Some(total)) if processed > 0 && total > processed => {
            let elapsed = (now - started).as_seconds_f64().max(0.001);
            let rate = f64::from(processed) / elapsed;
            Some((f64::from(total - processed) / rate).round() as i32)
        }
        _ => job.eta_seconds,
    };
    diesel::update(progress_jobs::table.filter(progress_jobs::id.eq(id)))
        .set((
            progress_jobs::processed_count.eq(processed),
            progress_jobs::progress_percent.eq(percent),
            progress_jobs::eta_seconds.eq(eta),
            progress_jobs::heartbeat_at.eq(now),
        ))
        .execute(conn)
        .await
}

/// Adds `items` to the processed count of a pending or running job and
/// derives percent and ETA on the row itself: one statement whatever the
/// count, run in the unit's transaction by the job queue.
pub async fn add_processed(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    items: i32,
) -> QueryResult<usize> {
    // The text never varies, so the statement stays prepared per connection.
    Cached(
        diesel::sql_query(
            "UPDATE progress_jobs SET \
                 processed_count = processed_count + $2, \
                 progress_percent = CASE WHEN total_count > 0 \
                     THEN LEAST(100, GREATEST(0, round((processed_count + $2) * 100.0 / total_count)))::smallint \
                     ELSE progress_percent END, \
                 eta_seconds = CASE \
                     WHEN total_count IS NOT NULL AND processed_count + $2 >= total_count THEN 0 \
                     WHEN total_count IS NOT NULL AND started_at IS NOT NULL AND processed_count + $2 > 0 \
                     THEN LEAST(2147483647, round(GREATEST(extract(epoch FROM now() - started_at), 0.001) \
                         / (processed_count + $2) * (total_count - processed_count - $2)))::integer \
                     ELSE eta_seconds END, \
                 heartbeat_at = now() \
             WHERE id = $1 AND status IN ('pending', 'running')",
        )
        .bind::<diesel::sql_types::Uuid, _>(id)
        .bind::<diesel::sql_types::Integer, _>(items),
    )
    .execute(conn)
    .await
}

/// `min(100, round(processed / total · 100))` when a total is known.
pub fn percent(processed: i32, total: Option<i32>) -> Option<i16> {
    total.filter(|t| *t > 0).map(|t| {
        let p = (f64::from(processed) / f64::from(t) * 100.0).round();
        p.clamp(0.0, 100.0) as i16
    })
}

pub async fn heartbeat(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<usize> {
    diesel::update(
        progress_jobs::table
            .filter(progress_jobs::id.eq(id))
            .filter(progress_jobs::status.eq("running")),
    )
    .set(progress_jobs::heartbeat_at.eq(OffsetDateTime::now_utc()))
    .execute(conn)
    .await
}

/// pending|running|failed → completed.
pub async fn complete(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    summary: Option<Value>,
) -> QueryResult<usize> {
    transition(conn, id, "completed", None, move |conn| {
        Box::pin(async move {
            diesel::update(
                progress_jobs::table
                    .filter(progress_jobs::id.eq(id))
                    .filter(progress_jobs::status.eq_any(["pending", "running", "failed"])),
            )
            .set((
                progress_jobs::status.eq("completed"),
                progress_jobs::progress_percent.eq(100),
                progress_jobs::eta_seconds.eq(0),
                progress_jobs::finished_at.eq(OffsetDateTime::now_utc()),
                progress_jobs::result_summary.eq(summary),
            ))
            .execute(conn)
            .await
        })
    })
    .await
}

/// pending|running → failed.
pub async fn fail(conn: &mut AsyncPgConnection, id: Uuid, error: &str) -> QueryResult<usize> {
    fail_with(conn, id, error, None).await
}

/// pending|running → failed, with a result (the items that failed so far).
pub async fn fail_with(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    error: &str,
    summary: Option<Value>,
) -> QueryResult<usize> {
    let error: String = error.chars().take(2000).collect();
    transition(conn, id, "failed", None, move |conn| {
        Box::pin(async move {
            diesel::update(
                progress_jobs::table
                    .filter(progress_jobs::id.eq(id))
                    .filter(progress_jobs::status.eq_any(["pending", "running"])),
            )
            .set((
                progress_jobs::status.eq("failed"),
                progress_jobs::finished_at.eq(OffsetDateTime::now_utc()),
                progress_jobs::error_message.eq(error),
                progress_jobs::result_summary.eq(summary),
            ))
            .execute(conn)
            .await
        })
    })
    .await
}
