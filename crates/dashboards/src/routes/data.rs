//! `POST /dashboards/widgets/data` and `/batch`.

use actix_web::{HttpResponse, post, web};
use stoa_acl::{AuthContext, Registry};
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use crate::analytics::request::{BatchRequest, BatchResults, WidgetData, WidgetDataRequest};
use crate::analytics::run;

// One statement per request.
/// Aggregates one analytics entity for the caller's tenant and visible
/// organizations.
#[utoipa::path(
    tag = super::TAG,
    request_body = WidgetDataRequest,
    responses(
        (status = 200, body = WidgetData),
        (status = 400, body = ErrorBody, description = "`Invalid JSON body`, `Invalid request payload` (with `issues`), `Invalid entity type: ..`, `Invalid metric field: ..`, `Invalid groupBy field: ..`, `Invalid filter field: ..`, `Invalid dateRange field: ..`, `Tenant context is required`"),
        (status = 403, body = ErrorBody, description = "Missing `analytics.view` or a feature the entity requires"),
        (status = 500, body = ErrorBody),
    )
)]
#[post("/dashboards/widgets/data")]
pub async fn widget_data(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<Registry>,
    body: Json<WidgetDataRequest>,
) -> AppResult<HttpResponse> {
    ctx.require(crate::ANALYTICS_VIEW)?;
    // May lag a moment behind (stoa_core::db::Db::reader).
    let mut conn = db.reader().conn().await?;
    let data = run::widget_data(&mut conn, &registry, &ctx, &body.0).await?;
    Ok(HttpResponse::Ok().json(data))
}

/// Up to 50 widget data requests, each answered on its own (`ok:false`
/// with its error, `Forbidden` for an entity the caller may not read).
#[utoipa::path(
    tag = super::TAG,
    request_body = BatchRequest,
    responses(
        (status = 200, body = BatchResults),
        (status = 400, body = ErrorBody, description = "`Invalid JSON body`, `Invalid request payload` (with `issues`, paths `requests.N.request...`), `Tenant context is required`"),
        (status = 403, body = ErrorBody, description = "Missing `analytics.view`"),
        (status = 500, body = ErrorBody),
    )
)]
#[post("/dashboards/widgets/data/batch")]
pub async fn widget_data_batch(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<Registry>,
    body: Json<BatchRequest>,
) -> AppResult<HttpResponse> {
    ctx.require(crate::ANALYTICS_VIEW)?;
    run::scope_of(&ctx)?;
    let mut conn = db.reader().conn().await?;
    let results = run::batch(&mut conn, &registry, &ctx, body.0.requests).await;
    Ok(HttpResponse::Ok().json(BatchResults { results }))
}
