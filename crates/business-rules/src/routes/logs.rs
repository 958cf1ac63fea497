//! `GET /business_rules/logs` and `/business_rules/logs/{id}`.

use actix_web::{HttpRequest, HttpResponse, get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Path, Query};

use crate::VIEW_LOGS;
use crate::dto::*;
use crate::error::RulesError;
use crate::service::logs;

#[utoipa::path(
    tag = "Business rules",
    params(LogListQuery, ListParams),
    responses(
        (status = 200, body = LogList),
    )
)]
#[get("/business_rules/logs")]
pub async fn list_logs(
    http: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<LogListQuery>,
    params: Query<ListParams>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW_LOGS)?;
    let kept = {
        let mut conn = db.conn().await?;
        logs::list(&mut conn, &ctx, &q, &params).await?
    };
    // Kept: the same page again is the session check alone while no log or rule
    // of the tenant (and no ACL) changed.
    kept.answer(&http, &ctx)
}

#[utoipa::path(
    tag = "Business rules",
    params(("id" = String, Path, description = "Log id (digits)")),
    responses(
        (status = 200, body = LogDetail),
        (status = 400, body = ErrorBody, description = "`Invalid log id`"),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/business_rules/logs/{id}")]
pub async fn get_log(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
) -> AppResult<web::Json<LogDetail>> {
    ctx.require(VIEW_LOGS)?;
    let id: i64 = id
        .trim()
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or(RulesError::InvalidLogId)?;
    let mut conn = db.conn().await?;
    Ok(web::Json(logs::get(&mut conn, &ctx, id).await?))
}
