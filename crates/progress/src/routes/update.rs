//! `PUT /progress/jobs/{id}`, and the progress report it shares with
//! `update_by_body.rs`.

use actix_web::{put, web};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json, Path};

use super::find;
use crate::dto::{JobPath, UpdateJob, Updated};
use crate::queries::{self, Report};
use crate::service;

/// Reports progress on a pending or running job (terminal jobs are left unchanged).
#[utoipa::path(
    tag = "Progress",
    params(JobPath),
    request_body = UpdateJob,
    responses((status = 200, body = Updated), (status = 404, body = ErrorBody))
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
/// collection form in [`super::update_by_body`]).
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
    queries::report(
        &mut conn,
        job.id,
        Report {
            processed_count: processed,
            progress_percent: percent,
            total_count: total,
            eta_seconds: body.eta_seconds.or(job.eta_seconds),
            meta,
        },
    )
    .await?;
    Ok(web::Json(Updated {
        ok: true,
        progress_percent: percent,
    }))
}
