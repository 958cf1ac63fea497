//! `GET /progress/jobs/{id}`.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use super::find;
use crate::dto::JobPath;
use crate::service::ProgressJob;

/// One job, in full.
#[utoipa::path(
    tag = "Progress",
    params(JobPath),
    responses((status = 200, body = ProgressJob), (status = 404, body = ErrorBody))
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
