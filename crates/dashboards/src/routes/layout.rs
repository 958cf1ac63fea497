//! `GET/PUT /dashboards/layout`, `PATCH /dashboards/layout/{itemId}`.

use actix_web::{HttpRequest, HttpResponse, get, patch, put, web};
use stoa_acl::{AuthContext, Registry, RoleDirectory};
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::read_cache::{ReadDeps, answer_json};
use stoa_core::{AppError, AppResult, Json, Path};
use uuid::Uuid;

use crate::dto::{LayoutResponse, Ok as OkBody, PatchLayoutItem, PutLayout};
use crate::error::DashboardsError;
use crate::service;

/// The caller's dashboard: its items, the widgets it may have and who it is.
/// A first read stores the default layout (the widgets enabled by default).
// A session caller's answer is kept until its grants, its user record or a
// dashboards table of its tenant change: a repeated read is then the
// session check alone.
#[utoipa::path(
    tag = super::TAG,
    responses(
        (status = 200, body = LayoutResponse),
        (status = 403, body = ErrorBody, description = "Missing `dashboards.view`, no tenant, or an API key without a user"),
    )
)]
#[get("/dashboards/layout")]
pub async fn get_layout(
    req: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<Registry>,
    roles: web::Data<dyn RoleDirectory>,
) -> AppResult<HttpResponse> {
    ctx.require(crate::VIEW)?;
    let (body, versions) = service::get_layout(&db, &registry, roles.get_ref(), &ctx).await?;
    let deps = ReadDeps::new(crate::queries::LAYOUT_READ_DEPS, body.context.tenant_id);
    answer_json(&req, ctx.read_owner(), &body, deps, Some(versions), None)
}

/// Replaces the caller's layout: array order wins, widgets the caller may
/// not have are dropped.
#[utoipa::path(
    tag = super::TAG,
    request_body = PutLayout,
    responses(
        (status = 200, body = OkBody, description = "Saved; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid JSON body`, `Invalid layout payload` (with `issues`), `Layout item IDs must be unique`"),
        (status = 403, body = ErrorBody, description = "Missing `dashboards.configure`"),
        (status = 503, body = ErrorBody, description = "`Widget registry unavailable`: nothing saved"),
    )
)]
#[put("/dashboards/layout")]
pub async fn put_layout(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<Registry>,
    roles: web::Data<dyn RoleDirectory>,
    body: Json<PutLayout>,
) -> AppResult<HttpResponse> {
    ctx.require(crate::CONFIGURE)?;
    let op = service::put_layout(&db, &registry, roles.get_ref(), &ctx, body.0.items).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(OkBody { ok: true }))
}

/// Changes one item's size and/or settings (absent or `null` keeps them).
#[utoipa::path(
    tag = super::TAG,
    params(("itemId" = String, Path, description = "Layout item id (uuid)")),
    request_body = PatchLayoutItem,
    responses(
        (status = 200, body = OkBody, description = "Saved; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid payload` (with `issues`): not an object, a bad size or item id"),
        (status = 403, body = ErrorBody, description = "Missing `dashboards.configure`"),
        (status = 404, body = ErrorBody, description = "`Layout not found` / `Layout item not found`"),
    )
)]
#[patch("/dashboards/layout/{itemId}")]
pub async fn patch_layout_item(
    ctx: AuthContext,
    db: web::Data<Db>,
    item_id: Path<String>,
    body: Json<PatchLayoutItem>,
) -> AppResult<HttpResponse> {
    ctx.require(crate::CONFIGURE)?;
    let item_id = Uuid::parse_str(item_id.as_str())
        .map_err(|_| AppError::from(DashboardsError::InvalidItemId))?;
    let op = service::patch_layout_item(&db, &ctx, item_id, body.0).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(OkBody { ok: true }))
}
