//! `GET /progress/jobs`.

use actix_web::{get, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::pagination::total_pages;
use stoa_core::{AppResult, Query};
use time::OffsetDateTime;

use super::scope;
use crate::dto::{JobList, JobListQuery};
use crate::error::ProgressError;
use crate::queries::{self, JobFilter};
use crate::service::ProgressJob;

const STATUSES: [&str; 5] = ["pending", "running", "completed", "failed", "cancelled"];

/// Lists the scope's jobs.
#[utoipa::path(
    tag = "Progress",
    params(JobListQuery),
    security(("bearerAuth" = [])),
    responses((status = 200, body = JobList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
#[get("/progress/jobs")]
pub async fn list(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<JobListQuery>,
) -> AppResult<web::Json<JobList>> {
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
    let asc = q.sort_dir.as_deref() == Some("asc");
    let ordered = queries::ordered(
        queries::filtered(tenant, org, &filter),
        q.sort_field.unwrap_or_default(),
        asc,
    );
    let mut conn = db.conn().await?;
    let items: Vec<ProgressJob> = ordered
        .select(ProgressJob::as_select())
        .offset(page.offset())
        .limit(page.limit())
        .load(&mut *conn)
        .await?;
    let total: i64 = queries::filtered(tenant, org, &filter)
        .count()
        .get_result(&mut *conn)
        .await?;
    let total = u64::try_from(total).unwrap_or(0);
    Ok(web::Json(JobList {
        items,
        total,
        page: page.page,
        page_size: page.page_size,
        total_pages: total_pages(total, page.page_size),
    }))
}
