//! `GET /ai_assistant/usage/{daily,sessions,sessions/{sessionId}}`,
//! `GET /ai_assistant/moderation-flags`.

use actix_web::{get, web};
use serde::Deserialize;
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};
use time::Date;
use utoipa::IntoParams;
use uuid::Uuid;
use validator::Validate;

use crate::SETTINGS_MANAGE;
use crate::error::AiError;
use crate::extract::{Path, Query};
use crate::usage;

fn day(raw: Option<&str>, name: &str) -> Result<Option<Date>, AppError> {
    match raw.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => Date::parse(s, time::macros::format_description!("[year]-[month]-[day]"))
            .map(Some)
            .map_err(|_| AiError::Validation(format!("{name} must be a YYYY-MM-DD date")).into()),
    }
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct DailyQuery {
    /// `YYYY-MM-DD` (required).
    pub from: Option<String>,
    /// `YYYY-MM-DD` (required, inclusive).
    pub to: Option<String>,
    pub agent_id: Option<String>,
    pub model_id: Option<String>,
}

/// The daily rollup (token counts as decimal strings).
#[utoipa::path(tag = "AI Assistant", params(DailyQuery),
    responses((status = 200, body = Object, description = "`{rows, total}`"),
        (status = 403, body = ErrorBody)))]
#[get("/ai_assistant/usage/daily")]
pub async fn usage_daily(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<DailyQuery>,
) -> AppResult<web::Json<Value>> {
    ctx.require(SETTINGS_MANAGE)?;
    let q = q.into_inner();
    let (Some(from), Some(to)) = (day(q.from.as_deref(), "from")?, day(q.to.as_deref(), "to")?)
    else {
        return Err(AiError::Validation("from and to are required".into()).into());
    };
    let mut conn = db.conn().await?;
    Ok(web::Json(
        usage::daily(
            &mut conn,
            &ctx,
            from,
            to,
            q.agent_id.as_deref(),
            q.model_id.as_deref(),
        )
        .await?,
    ))
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct SessionsQuery {
    /// `YYYY-MM-DD` (required).
    pub from: Option<String>,
    /// `YYYY-MM-DD` (required, inclusive).
    pub to: Option<String>,
    pub agent_id: Option<String>,
    /// 1-100 (default 100).
    #[validate(range(min = 1, max = 100))]
    pub limit: Option<i64>,
    #[validate(range(min = 0))]
    pub offset: Option<i64>,
}

/// Per-session totals, newest first.
#[utoipa::path(tag = "AI Assistant", params(SessionsQuery),
    responses((status = 200, body = Object, description = "`{sessions, total, limit, offset}`"),
        (status = 403, body = ErrorBody)))]
#[get("/ai_assistant/usage/sessions")]
pub async fn usage_sessions(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<SessionsQuery>,
) -> AppResult<web::Json<Value>> {
    ctx.require(SETTINGS_MANAGE)?;
    let q = q.into_inner();
    let (Some(from), Some(to)) = (day(q.from.as_deref(), "from")?, day(q.to.as_deref(), "to")?)
    else {
        return Err(AiError::Validation("from and to are required".into()).into());
    };
    let (from, to) = (Some(from), Some(to));
    let mut conn = db.conn().await?;
    Ok(web::Json(
        usage::sessions(
            &mut conn,
            &ctx,
            from,
            to,
            q.agent_id.as_deref(),
            q.limit.unwrap_or(100),
            q.offset.unwrap_or(0),
        )
        .await?,
    ))
}

/// One session's steps (up to 200, by time then step).
#[utoipa::path(tag = "AI Assistant", params(("sessionId" = Uuid, Path)),
    responses((status = 200, body = Object, description = "`{events, total, sessionId}`"),
        (status = 404, body = ErrorBody, description = "`session_not_found`")))]
#[get("/ai_assistant/usage/sessions/{sessionId}")]
pub async fn usage_session(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<Uuid>,
) -> AppResult<web::Json<Value>> {
    ctx.require(SETTINGS_MANAGE)?;
    let mut conn = db.conn().await?;
    Ok(web::Json(
        usage::session(&mut conn, &ctx, id.into_inner()).await?,
    ))
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct FlagsQuery {
    #[validate(range(min = 1))]
    pub page: Option<i64>,
    /// 1-100 (default 50).
    #[validate(range(min = 1, max = 100))]
    pub page_size: Option<i64>,
    pub agent_id: Option<String>,
    pub user_id: Option<Uuid>,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// Flagged inputs (no text, only categories), newest first.
#[utoipa::path(tag = "AI Assistant", params(FlagsQuery),
    responses((status = 200, body = Object, description = "`{items, total, page, pageSize}`"),
        (status = 403, body = ErrorBody)))]
#[get("/ai_assistant/moderation-flags")]
pub async fn moderation_flags(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<FlagsQuery>,
) -> AppResult<web::Json<Value>> {
    ctx.require(SETTINGS_MANAGE)?;
    let q = q.into_inner();
    let from = day(q.from.as_deref(), "from")?;
    let to = day(q.to.as_deref(), "to")?;
    let mut conn = db.conn().await?;
    Ok(web::Json(
        usage::flags(
            &mut conn,
            &ctx,
            q.page.unwrap_or(1),
            q.page_size.unwrap_or(50),
            q.agent_id.as_deref(),
            q.user_id,
            from,
            to,
        )
        .await?,
    ))
}
