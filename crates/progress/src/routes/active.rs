//! `GET /progress/active`: what a client polls for the job indicator.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use time::OffsetDateTime;

use super::scope;
use crate::dto::ActiveJobs;
use crate::{queries, service};

/// Running and pending jobs, plus those finished in the last 30 seconds.
#[utoipa::path(
    tag = "Progress",
    responses((status = 200, body = ActiveJobs), (status = 403, body = ErrorBody))
)]
#[get("/progress/active")]
pub async fn active(ctx: AuthContext, db: web::Data<Db>) -> AppResult<web::Json<ActiveJobs>> {
    ctx.require("progress.view")?;
    let (tenant, org) = scope(&ctx)?;
    let mut conn = db.conn().await?;
    service::sweep_stale(&mut conn, tenant).await?;
    let active = queries::active(&mut conn, tenant, &org).await?;
    let since = OffsetDateTime::now_utc() - time::Duration::seconds(30);
    let recently_completed = queries::recently_completed(&mut conn, tenant, &org, since).await?;
    Ok(web::Json(ActiveJobs {
        active,
        recently_completed,
    }))
}
