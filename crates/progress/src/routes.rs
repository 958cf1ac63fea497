//! `/progress/...`: what clients poll while long operations run.

use actix_web::{HttpResponse, delete, get, post, put, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::pagination::total_pages;
use stoa_core::{AppError, AppResult, Json, Path, Query};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use crate::schema::progress_jobs;
use crate::service::{self, Cancel, NewJob, ProgressJob};

/// The caller's scope: tenant (required) and organization (when set).
fn scope(ctx: &AuthContext) -> AppResult<(Uuid, Option<Uuid>)> {
    let tenant = ctx.tenant_id.ok_or_else(AppError::unauthorized)?;
    Ok((tenant, ctx.organization_id()))
}

type Boxed = progress_jobs::BoxedQuery<'static, diesel::pg::Pg>;

fn scoped(tenant: Uuid, org: Option<Uuid>) -> Boxed {
    let mut q = progress_jobs::table
        .filter(progress_jobs::tenant_id.eq(tenant))
        .into_boxed();
    if let Some(org) = org {
        q = q.filter(progress_jobs::organization_id.eq(org));
    }
    q
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActiveJobs {
    pub active: Vec<ProgressJob>,
    pub recently_completed: Vec<ProgressJob>,
}

/// Running and pending jobs, plus those finished in the last 30 seconds.
#[utoipa::path(
    tag = "Progress",
    security(("bearerAuth" = [])),
    responses((status = 200, body = ActiveJobs), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
#[get("/progress/active")]
pub async fn active(ctx: AuthContext, db: web::Data<Db>) -> AppResult<web::Json<ActiveJobs>> {
    ctx.require("progress.view")?;
    let (tenant, org) = scope(&ctx)?;
    let mut conn = db.conn().await?;
    service::sweep_stale(&mut conn, tenant).await?;
    let active = scoped(tenant, org)
        .filter(progress_jobs::status.eq_any(["pending", "running"]))
        .filter(progress_jobs::parent_job_id.is_null())
        .order(progress_jobs::created_at.desc())
        .limit(50)
        .select(ProgressJob::as_select())
        .load(&mut *conn)
        .await?;
    let since = OffsetDateTime::now_utc() - time::Duration::seconds(30);
    let recently_completed = scoped(tenant, org)
        .filter(progress_jobs::status.eq_any(["completed", "failed"]))
        .filter(progress_jobs::parent_job_id.is_null())
        .filter(progress_jobs::finished_at.ge(since))
        .order(progress_jobs::finished_at.desc())
        .limit(10)
        .select(ProgressJob::as_select())
        .load(&mut *conn)
        .await?;
    Ok(web::Json(ActiveJobs {
        active,
        recently_completed,
    }))
}

#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum JobSort {
    #[default]
    CreatedAt,
    StartedAt,
    FinishedAt,
}

#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct JobListQuery {
    /// One status or a comma-separated list.
    pub status: Option<String>,
    #[validate(length(max = 100))]
    pub job_type: Option<String>,
    pub parent_job_id: Option<Uuid>,
    /// Without `status`, only pending and running jobs are listed unless this is true.
    pub include_completed: Option<bool>,
    /// ISO-8601: jobs finished at or after.
    pub completed_since: Option<String>,
    pub page: Option<u64>,
    /// Default 20, max 100.
    pub page_size: Option<u64>,
    #[validate(length(max = 200))]
    pub search: Option<String>,
    pub sort_field: Option<JobSort>,
    /// `asc` or `desc` (default).
    pub sort_dir: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobList {
    pub items: Vec<ProgressJob>,
    pub total: u64,
    pub page: u64,
    pub page_size: u64,
    pub total_pages: u64,
}

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
        return Err(AppError::bad_request(format!(
            "Invalid query parameters: status: unknown value `{bad}`"
        )));
    }
    let completed_since = match q.completed_since.as_deref() {
        None => None,
        Some(raw) => Some(
            OffsetDateTime::parse(raw, &time::format_description::well_known::Rfc3339).map_err(
                |_| {
                    AppError::bad_request(
                        "Invalid query parameters: completedSince: not an ISO-8601 date",
                    )
                },
            )?,
        ),
    };
    let filtered = || {
        let mut query = scoped(tenant, org);
        if !statuses.is_empty() {
            query = query.filter(progress_jobs::status.eq_any(statuses.clone()));
        } else if q.include_completed != Some(true) {
            query = query.filter(progress_jobs::status.eq_any(["pending", "running"]));
        }
        if let Some(kind) = q.job_type.clone().filter(|s| !s.is_empty()) {
            query = query.filter(progress_jobs::job_type.eq(kind));
        }
        if let Some(parent) = q.parent_job_id {
            query = query.filter(progress_jobs::parent_job_id.eq(parent));
        }
        if let Some(since) = completed_since {
            query = query.filter(progress_jobs::finished_at.ge(since));
        }
        if let Some(search) = q.search.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
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
    };
    let asc = q.sort_dir.as_deref() == Some("asc");
    let ordered = match (q.sort_field.unwrap_or_default(), asc) {
        (JobSort::CreatedAt, true) => filtered().order(progress_jobs::created_at.asc()),
        (JobSort::CreatedAt, false) => filtered().order(progress_jobs::created_at.desc()),
        (JobSort::StartedAt, true) => filtered().order(progress_jobs::started_at.asc()),
        (JobSort::StartedAt, false) => filtered().order(progress_jobs::started_at.desc()),
        (JobSort::FinishedAt, true) => filtered().order(progress_jobs::finished_at.asc()),
        (JobSort::FinishedAt, false) => filtered().order(progress_jobs::finished_at.desc()),
    };
    let mut conn = db.conn().await?;
    let items = ordered
        .then_order_by(progress_jobs::id.asc())
        .select(ProgressJob::as_select())
        .offset(page.offset())
        .limit(page.limit())
        .load(&mut *conn)
        .await?;
    let total: i64 = filtered().count().get_result(&mut *conn).await?;
    let total = u64::try_from(total).unwrap_or(0);
    Ok(web::Json(JobList {
        items,
        total,
        page: page.page,
        page_size: page.page_size,
        total_pages: total_pages(total, page.page_size),
    }))
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateJob {
    #[validate(length(min = 1, max = 100))]
    pub job_type: String,
    #[validate(length(min = 1, max = 255))]
    pub name: String,
    #[validate(length(max = 1000))]
    pub description: Option<String>,
    #[validate(range(min = 1))]
    pub total_count: Option<i32>,
    pub cancellable: Option<bool>,
    pub meta: Option<serde_json::Map<String, Value>>,
    pub parent_job_id: Option<Uuid>,
    #[validate(range(min = 0))]
    pub partition_index: Option<i32>,
    #[validate(range(min = 1))]
    pub partition_count: Option<i32>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Created {
    pub id: Uuid,
}

/// Creates a progress record (for work a client tracks itself).
#[utoipa::path(
    tag = "Progress",
    request_body = CreateJob,
    security(("bearerAuth" = [])),
    responses((status = 201, body = Created), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
#[post("/progress/jobs")]
pub async fn create(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<CreateJob>,
) -> AppResult<HttpResponse> {
    ctx.require("progress.create")?;
    let (tenant, org) = scope(&ctx)?;
    let body = body.into_inner();
    let mut conn = db.conn().await?;
    if let Some(parent) = body.parent_job_id {
        let found: i64 = scoped(tenant, org)
            .filter(progress_jobs::id.eq(parent))
            .count()
            .get_result(&mut *conn)
            .await?;
        if found == 0 {
            return Err(AppError::bad_request("parentJobId: no such job"));
        }
    }
    let id = service::create(
        &mut conn,
        &NewJob {
            job_type: body.job_type,
            name: body.name,
            description: body.description,
            total_count: body.total_count,
            cancellable: body.cancellable.unwrap_or(false),
            meta: body.meta.map(Value::Object),
            parent_job_id: body.parent_job_id,
            partition_index: body.partition_index,
            partition_count: body.partition_count,
            tenant_id: tenant,
            organization_id: org,
            started_by_user_id: ctx.user_id,
        },
    )
    .await?;
    Ok(HttpResponse::Created().json(Created { id }))
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct JobPath {
    pub id: String,
}

async fn find(
    conn: &mut diesel_async::AsyncPgConnection,
    ctx: &AuthContext,
    raw: &str,
) -> AppResult<ProgressJob> {
    let (tenant, org) = scope(ctx)?;
    let not_found = || AppError::not_found("Not found");
    let id: Uuid = raw.parse().map_err(|_| not_found())?;
    scoped(tenant, org)
        .filter(progress_jobs::id.eq(id))
        .select(ProgressJob::as_select())
        .first(conn)
        .await
        .optional()?
        .ok_or_else(not_found)
}

/// One job, in full.
#[utoipa::path(
    tag = "Progress",
    params(JobPath),
    security(("bearerAuth" = [])),
    responses((status = 200, body = ProgressJob), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[get("/progress/jobs/{id}")]
pub async fn detail(
    ctx: AuthContext,
    db: web::Data<Db>,
    path: Path<JobPath>,
) -> AppResult<web::Json<ProgressJob>> {
    ctx.require("progress.view")?;
    let mut conn = db.conn().await?;
    Ok(web::Json(find(&mut conn, &ctx, &path.id).await?))
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateJob {
    #[validate(range(min = 0))]
    pub processed_count: Option<i32>,
    #[validate(range(min = 0, max = 100))]
    pub progress_percent: Option<i16>,
    #[validate(range(min = 1))]
    pub total_count: Option<i32>,
    #[validate(range(min = 0))]
    pub eta_seconds: Option<i32>,
    /// Shallow-merged into the stored meta.
    pub meta: Option<serde_json::Map<String, Value>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Updated {
    pub ok: bool,
    pub progress_percent: i16,
}

/// Reports progress on a pending or running job (terminal jobs are left unchanged).
#[utoipa::path(
    tag = "Progress",
    params(JobPath),
    request_body = UpdateJob,
    security(("bearerAuth" = [])),
    responses((status = 200, body = Updated), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[put("/progress/jobs/{id}")]
pub async fn update(
    ctx: AuthContext,
    db: web::Data<Db>,
    path: Path<JobPath>,
    body: Json<UpdateJob>,
) -> AppResult<web::Json<Updated>> {
    update_job(&ctx, &db, &path.id, body.into_inner()).await
}

/// Both forms of the progress report (`/progress/jobs/{id}` and the
/// collection form in [`crate::collection_routes`]).
pub(crate) async fn update_job(
    ctx: &AuthContext,
    db: &Db,
    id: &str,
    body: UpdateJob,
) -> AppResult<web::Json<Updated>> {
    ctx.require("progress.update")?;
    let mut conn = db.conn().await?;
    let job = find(&mut conn, ctx, id).await?;
    if !matches!(job.status.as_str(), "pending" | "running") {
        return Ok(web::Json(Updated {
            ok: true,
            progress_percent: job.progress_percent,
        }));
    }
    let total = body.total_count.or(job.total_count);
    let processed = body.processed_count.unwrap_or(job.processed_count);
    let percent = body
        .progress_percent
        .or_else(|| {
            body.processed_count
                .and_then(|p| service::percent(p, total))
        })
        .unwrap_or(job.progress_percent);
    let meta = match (job.meta.clone(), body.meta.clone()) {
        (Some(Value::Object(mut old)), Some(new)) => {
            old.extend(new);
            Some(Value::Object(old))
        }
        (_, Some(new)) => Some(Value::Object(new)),
        (old, None) => old,
    };
    diesel::update(progress_jobs::table.filter(progress_jobs::id.eq(job.id)))
        .set((
            progress_jobs::processed_count.eq(processed),
            progress_jobs::progress_percent.eq(percent),
            progress_jobs::total_count.eq(total),
            progress_jobs::eta_seconds.eq(body.eta_seconds.or(job.eta_seconds)),
            progress_jobs::meta.eq(meta),
            progress_jobs::heartbeat_at.eq(OffsetDateTime::now_utc()),
        ))
        .execute(&mut *conn)
        .await?;
    Ok(web::Json(Updated {
        ok: true,
        progress_percent: percent,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CancelResponse {
    pub ok: bool,
}

/// Cancels a cancellable job (pending: at once; running: at its next check).
#[utoipa::path(
    tag = "Progress",
    params(JobPath),
    security(("bearerAuth" = [])),
    responses((status = 200, body = CancelResponse), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
#[delete("/progress/jobs/{id}")]
pub async fn cancel(
    ctx: AuthContext,
    db: web::Data<Db>,
    path: Path<JobPath>,
) -> AppResult<web::Json<CancelResponse>> {
    cancel_job(&ctx, &db, &path.id).await
}

/// Both forms of the cancellation (`/progress/jobs/{id}` and the collection
/// form in [`crate::collection_routes`]).
pub(crate) async fn cancel_job(
    ctx: &AuthContext,
    db: &Db,
    id: &str,
) -> AppResult<web::Json<CancelResponse>> {
    ctx.require("progress.cancel")?;
    let mut conn = db.conn().await?;
    let cannot = || AppError::bad_request("Cannot cancel this job");
    let job = find(&mut conn, ctx, id).await.map_err(|_| cannot())?;
    match service::cancel(&mut conn, &job, ctx.user_id).await? {
        Cancel::NotCancellable => Err(cannot()),
        _ => Ok(web::Json(CancelResponse { ok: true })),
    }
}
