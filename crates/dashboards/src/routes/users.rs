//! `GET/PUT /dashboards/users/widgets`.

use actix_web::{HttpResponse, get, put, web};
use stoa_acl::{AclResolver, AuthContext, Registry, RoleDirectory, Services, UserDirectory};
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json, Query};

use crate::dto::{PutUserWidgets, UserWidgets, UserWidgetsQuery, UserWidgetsSaved};
use crate::service;

/// A user's own widgets and the widgets it ends up with (its override, else
/// its roles', filtered by its own grants in that scope).
#[utoipa::path(
    tag = super::TAG,
    params(UserWidgetsQuery),
    responses(
        (status = 200, body = UserWidgets),
        (status = 400, body = ErrorBody, description = "`userId is required`, `Invalid userId`"),
        (status = 403, body = ErrorBody, description = "Missing `dashboards.admin.assign-widgets`, or no tenant"),
        (status = 404, body = ErrorBody, description = "`User not found` (also: another tenant's user, a user outside the caller's organizations, a super admin for other callers)"),
    )
)]
#[get("/dashboards/users/widgets")]
pub async fn get_user_widgets(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<Registry>,
    users: web::Data<dyn UserDirectory>,
    acl: web::Data<dyn AclResolver>,
    roles: web::Data<dyn RoleDirectory>,
    query: Query<UserWidgetsQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(crate::ASSIGN)?;
    let user = service::required_id(query.user_id.as_deref(), "userId")?;
    let scope = service::read_scope(
        &ctx,
        query.tenant_id.as_deref(),
        query.organization_id.as_deref(),
    )?;
    let accounts = (users.get_ref(), acl.get_ref(), roles.get_ref());
    let body = service::get_user_widgets(&db, &registry, accounts, &ctx, user, scope).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// Sets a user's widgets in the caller's scope: `override` with a list
/// (even empty), `inherit` to follow the roles again.
#[utoipa::path(
    tag = super::TAG,
    request_body = PutUserWidgets,
    responses(
        (status = 200, body = UserWidgetsSaved, description = "Saved; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid payload` (with `issues`), `Unknown widget ids: ...`"),
        (status = 403, body = ErrorBody, description = "Missing `dashboards.admin.assign-widgets`, no tenant, or an organization outside the caller's"),
        (status = 404, body = ErrorBody, description = "`User not found` (also: another tenant's user, a user outside the caller's organizations, a super admin for other callers)"),
    )
)]
#[put("/dashboards/users/widgets")]
pub async fn put_user_widgets(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<Registry>,
    services: web::Data<Services>,
    body: Json<PutUserWidgets>,
) -> AppResult<HttpResponse> {
    ctx.require(crate::ASSIGN)?;
    let body = body.0;
    let (widget_ids, op) = service::put_user_widgets(
        &db,
        &registry,
        &*services.accounts,
        &ctx,
        body.user_id,
        body.mode,
        body.widget_ids,
    )
    .await?;
    Ok(
        with_operation(HttpResponse::Ok(), &op).json(UserWidgetsSaved {
            ok: true,
            mode: body.mode,
            widget_ids,
        }),
    )
}
