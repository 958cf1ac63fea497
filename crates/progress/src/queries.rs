//! The SQL of the `/progress/...` endpoints. Every read is scoped to the
//! caller's tenant (and organization, when one is selected).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::dto::JobSort;
use crate::schema::progress_jobs;
use crate::service::ProgressJob;

type Boxed = progress_jobs::BoxedQuery<'static, diesel::pg::Pg>;

/// Which organizations' jobs a caller reaches.
#[derive(Clone, Debug, Default)]
pub struct OrgScope {
    /// The selected organization: only its jobs (`None`: every one the
    /// caller reaches).
    pub selected: Option<Uuid>,
    /// For a caller restricted to some organizations: those. A selection
    /// only narrows, so under `__all__` such a caller still sees only them.
    pub allowed: Option<Vec<Uuid>>,
    /// The caller: a restricted caller's own jobs without an organization
    /// stay visible to it.
    pub me: Option<Uuid>,
}

/// The scope's jobs: one tenant, the selected organization when one is set,
/// and a restricted caller's organizations.
pub fn scoped(tenant: Uuid, org: &OrgScope) -> Boxed {
    let mut q = progress_jobs::table
        .filter(progress_jobs::tenant_id.eq(tenant))
        .into_boxed();
    if let Some(selected) = org.selected {
        q = q.filter(progress_jobs::organization_id.eq(selected));
    }
    if let Some(allowed) = &org.allowed {
        let inside = progress_jobs::organization_id.eq_any(allowed.clone());
        q = match org.me {
            Some(me) => q.filter(
                inside.or(progress_jobs::organization_id
                    .is_null()
                    .and(progress_jobs::started_by_user_id.eq(me))),
            ),
            None => q.filter(inside),
        };
    }
    q
}

/// Top-level pending and running jobs, newest first (at most 50).
pub async fn active(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    org: &OrgScope,
) -> QueryResult<Vec<ProgressJob>> {
    scoped(tenant, org)
        .filter(progress_jobs::status.eq_any(["pending", "running"]))
        .filter(progress_jobs::parent_job_id.is_null())
        .order(progress_jobs::created_at.desc())
        .limit(50)
        .select(ProgressJob::as_select())
        .load(conn)
        .await
}

/// Top-level jobs that completed or failed at or after `since` (at most 10).
pub async fn recently_completed(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    org: &OrgScope,
    since: OffsetDateTime,
) -> QueryResult<Vec<ProgressJob>> {
    scoped(tenant, org)
        .filter(progress_jobs::status.eq_any(["completed", "failed"]))
        .filter(progress_jobs::parent_job_id.is_null())
        .filter(progress_jobs::finished_at.ge(since))
        .order(progress_jobs::finished_at.desc())
        .limit(10)
        .select(ProgressJob::as_select())
        .load(conn)
        .await
}

/// The filters of `GET /progress/jobs`, validated.
#[derive(Clone, Debug, Default)]
pub struct JobFilter {
    /// Empty: pending and running only, unless `include_completed`.
    pub statuses: Vec<String>,
    pub include_completed: bool,
    pub job_type: Option<String>,
    pub parent_job_id: Option<Uuid>,
    pub completed_since: Option<OffsetDateTime>,
    /// Matched (case-insensitively, as a substring) against name and type.
    pub search: Option<String>,
}

/// The scope's jobs matching `filter` (without order and window).
pub fn filtered(tenant: Uuid, org: &OrgScope, filter: &JobFilter) -> Boxed {
    let mut query = scoped(tenant, org);
    if !filter.statuses.is_empty() {
        query = query.filter(progress_jobs::status.eq_any(filter.statuses.clone()));
    } else if !filter.include_completed {
        query = query.filter(progress_jobs::status.eq_any(["pending", "running"]));
    }
    if let Some(kind) = filter.job_type.clone().filter(|s| !s.is_empty()) {
        query = query.filter(progress_jobs::job_type.eq(kind));
    }
    if let Some(parent) = filter.parent_job_id {
        query = query.filter(progress_jobs::parent_job_id.eq(parent));
    }
    if let Some(since) = filter.completed_since {
        query = query.filter(progress_jobs::finished_at.ge(since));
    }
    if let Some(search) = filter
        .search
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let pattern = format!(
            "%{}%",
            search
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        query = query.filter(
            progress_jobs::name
                .ilike(pattern.clone())
                .or(progress_jobs::job_type.ilike(pattern)),
        );
    }
    query
}

/// Orders a filtered query (ties broken by id).
pub fn ordered(query: Boxed, sort: JobSort, asc: bool) -> Boxed {
    let query = match (sort, asc) {
        (JobSort::CreatedAt, true) => query.order(progress_jobs::created_at.asc()),
        (JobSort::CreatedAt, false) => query.order(progress_jobs::created_at.desc()),
        (JobSort::StartedAt, true) => query.order(progress_jobs::started_at.asc()),
        (JobSort::StartedAt, false) => query.order(progress_jobs::started_at.desc()),
        (JobSort::FinishedAt, true) => query.order(progress_jobs::finished_at.asc()),
        (JobSort::FinishedAt, false) => query.order(progress_jobs::finished_at.desc()),
    };
    query.then_order_by(progress_jobs::id.asc())
}

/// Whether the scope holds the job `id`.
pub async fn exists(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    org: &OrgScope,
    id: Uuid,
) -> QueryResult<bool> {
    let found: i64 = scoped(tenant, org)
        .filter(progress_jobs::id.eq(id))
        .count()
        .get_result(conn)
        .await?;
    Ok(found > 0)
}

/// The scope's job `id`, if any.
pub async fn job(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    org: &OrgScope,
    id: Uuid,
) -> QueryResult<Option<ProgressJob>> {
    scoped(tenant, org)
        .filter(progress_jobs::id.eq(id))
        .select(ProgressJob::as_select())
        .first(conn)
        .await
        .optional()
}

/// A progress report's new values (already merged with the stored ones).
#[derive(Clone, Debug)]
pub struct Report {
    pub processed_count: i32,
    pub progress_percent: i16,
    pub total_count: Option<i32>,
    pub eta_seconds: Option<i32>,
    pub meta: Option<Value>,
}

/// Stores a progress report and refreshes the heartbeat.
pub async fn report(conn: &mut AsyncPgConnection, id: Uuid, report: Report) -> QueryResult<usize> {
    diesel::update(progress_jobs::table.filter(progress_jobs::id.eq(id)))
        .set((
            progress_jobs::processed_count.eq(report.processed_count),
            progress_jobs::progress_percent.eq(report.progress_percent),
            progress_jobs::total_count.eq(report.total_count),
            progress_jobs::eta_seconds.eq(report.eta_seconds),
            progress_jobs::meta.eq(report.meta),
            progress_jobs::heartbeat_at.eq(OffsetDateTime::now_utc()),
        ))
        .execute(conn)
        .await
}

/// The sort key of a job-list cursor: the sort column's value, then the id.
pub type JobKey = (Option<OffsetDateTime>, Uuid);

/// The sort key of `job` under `sort`.
pub fn job_key(job: &ProgressJob, sort: JobSort) -> JobKey {
    let value = match sort {
        JobSort::CreatedAt => Some(job.created_at),
        JobSort::StartedAt => job.started_at,
        JobSort::FinishedAt => job.finished_at,
    };
    (value, job.id)
}

/// Keeps the rows after `key` in the order of [`ordered`] (keyset paging).
/// Postgres sorts NULLs last ascending and first descending; ties go by id
/// ascending.
pub fn after(query: Boxed, sort: JobSort, asc: bool, key: &JobKey) -> Boxed {
    use diesel::dsl::sql;
    use diesel::sql_types::{Bool, Timestamptz, Uuid as SqlUuid};
    let col = match sort {
        JobSort::CreatedAt => "progress_jobs.created_at",
        JobSort::StartedAt => "progress_jobs.started_at",
        JobSort::FinishedAt => "progress_jobs.finished_at",
    };
    let (value, id) = *key;
    match (value, asc) {
        (Some(v), true) => query.filter(
            sql::<Bool>(&format!("({col} > "))
                .bind::<Timestamptz, _>(v)
                .sql(&format!(" OR ({col} = "))
                .bind::<Timestamptz, _>(v)
                .sql(" AND progress_jobs.id > ")
                .bind::<SqlUuid, _>(id)
                .sql(&format!(") OR {col} IS NULL)")),
        ),
        (Some(v), false) => query.filter(
            sql::<Bool>(&format!("({col} < "))
                .bind::<Timestamptz, _>(v)
                .sql(&format!(" OR ({col} = "))
                .bind::<Timestamptz, _>(v)
                .sql(" AND progress_jobs.id > ")
                .bind::<SqlUuid, _>(id)
                .sql("))"),
        ),
        (None, true) => query.filter(
            sql::<Bool>(&format!("({col} IS NULL AND progress_jobs.id > "))
                .bind::<SqlUuid, _>(id)
                .sql(")"),
        ),
        (None, false) => query.filter(
            sql::<Bool>(&format!("({col} IS NOT NULL OR progress_jobs.id > "))
                .bind::<SqlUuid, _>(id)
                .sql(")"),
        ),
    }
}
