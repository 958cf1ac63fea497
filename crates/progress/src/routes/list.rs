//! `GET /progress/jobs`.

use actix_web::{HttpRequest, HttpResponse, get, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::read_cache::{ReadDeps, answer_json, versions};
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::{AppResult, Query};
use time::OffsetDateTime;

use super::scope;
use crate::dto::{JobList, JobListQuery, JobSort};
use crate::error::ProgressError;
use crate::queries::{self, JobFilter, JobKey};
use crate::schema::progress_jobs;
use crate::service::ProgressJob;

/// The read model of the job list: every write to `progress_jobs` bumps its
/// tenant's version (migration `progress_jobs_read_version`), so a session's
/// kept answer is served again only while no job of the tenant changed.
pub const READ_DEPS: &[&str] = &["progress.jobs"];

const STATUSES: [&str; 5] = ["pending", "running", "completed", "failed", "cancelled"];

/// Lists the scope's jobs.
#[utoipa::path(
    tag = "Progress",
    params(JobListQuery, ListParams),
    responses((status = 200, body = JobList), (status = 403, body = ErrorBody))
)]
#[get("/progress/jobs")]
pub async fn list(
    http: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<JobListQuery>,
    params: Query<ListParams>,
) -> AppResult<HttpResponse> {
    ctx.require("progress.view")?;
    let (tenant, org) = scope(&ctx)?;
    let page = stoa_core::PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(20, 100)?;
    let statuses: Vec<String> = q
        .status
        .as_deref()
        .unwrap_or("")
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(bad) = statuses.iter().find(|s| !STATUSES.contains(&s.as_str())) {
        return Err(ProgressError::InvalidQuery(format!("status: unknown value `{bad}`")).into());
    }
    let completed_since = match q.completed_since.as_deref() {
        None => None,
        Some(raw) => Some(
            OffsetDateTime::parse(raw, &time::format_description::well_known::Rfc3339).map_err(
                |_| ProgressError::InvalidQuery("completedSince: not an ISO-8601 date".into()),
            )?,
        ),
    };
    let filter = JobFilter {
        statuses,
        include_completed: q.include_completed == Some(true),
        job_type: q.job_type.clone(),
        parent_job_id: q.parent_job_id,
        completed_since,
        search: q.search.clone(),
    };
    let asc = q.sort_dir == Some(stoa_core::list::SortDir::Asc);
    let sort = q.sort_field.unwrap_or_default();
    let req = ListRequest::<JobKey>::new(page, &params, cursor_tag(sort, asc))?;
    // The keyset condition (after a cursor) belongs to both the page and
    // its count: the count starts where the page does.
    let filtered = || {
        let query = queries::filtered(tenant, &org, &filter);
        match &req.after {
            Some(key) => queries::after(query, sort, asc, key),
            None => query,
        }
    };
    let mut conn = db.conn().await?;
    let deps = ReadDeps::new(READ_DEPS, Some(tenant));
    // The page, its (capped) total and the read versions in one statement.
    let page_query = || {
        queries::ordered(filtered(), sort, asc)
            .select((
                ProgressJob::as_select(),
                req.count(filtered().select(progress_jobs::id)),
                versions(deps),
            ))
            .offset(req.offset())
            .limit(req.limit())
    };
    type PageRow = (ProgressJob, i64, Vec<i64>);
    let mut rows: Vec<PageRow> = page_query().load(&mut *conn).await?;
    let mut read_versions = <[PageRow]>::first(&rows).map(|r| r.2.clone());
    if rows.is_empty() {
        // An empty page has no row to carry its versions (a tenant without
        // jobs polls this list): read them first, then the page again. A
        // write after that read moves them past what is kept, one before it
        // is in the page, so the empty answer is kept as safely as a full one.
        let before: Vec<i64> = diesel::select(versions(deps))
            .get_result(&mut *conn)
            .await?;
        rows = page_query().load(&mut *conn).await?;
        read_versions = Some(<[PageRow]>::first(&rows).map_or(before, |r| r.2.clone()));
    }
    let mut counted = <[PageRow]>::first(&rows).map(|r| r.1);
    if req.needs_separate_count(rows.len()) {
        counted = Some(
            diesel::select(req.count(filtered().select(progress_jobs::id)))
                .get_result(&mut *conn)
                .await?,
        );
    }
    let items: Vec<ProgressJob> = rows.into_iter().map(|(job, _, _)| job).collect();
    let page = req.finish(items, counted, |job| queries::job_key(job, sort));
    let list = JobList { page };
    answer_json(&http, ctx.read_owner(), &list, deps, read_versions, None)
}

/// The cursor tag of each order (a cursor only continues the order it came from).
fn cursor_tag(sort: JobSort, asc: bool) -> &'static str {
    match (sort, asc) {
        (JobSort::CreatedAt, true) => "progress.jobs:createdAt:asc",
        (JobSort::CreatedAt, false) => "progress.jobs:createdAt:desc",
        (JobSort::StartedAt, true) => "progress.jobs:startedAt:asc",
        (JobSort::StartedAt, false) => "progress.jobs:startedAt:desc",
        (JobSort::FinishedAt, true) => "progress.jobs:finishedAt:asc",
        (JobSort::FinishedAt, false) => "progress.jobs:finishedAt:desc",
    }
}
