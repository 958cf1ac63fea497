//! `GET/PUT /dashboards/roles/widgets`.

use actix_web::{HttpResponse, get, put, web};
use stoa_acl::{AuthContext, Registry, RoleDirectory, Services};
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json, Query};

use crate::dto::{PutRoleWidgets, RoleWidgets, RoleWidgetsQuery, RoleWidgetsSaved};
use crate::service;

/// A role's widgets in a scope (the exact organization's row, else the
/// tenant-wide one).
#[utoipa::path(
    tag = super::TAG,
    params(RoleWidgetsQuery),
    responses(
        (status = 200, body = RoleWidgets),
        (status = 400, body = ErrorBody, description = "`roleId is required`, `Invalid roleId`"),
        (status = 403, body = ErrorBody, description = "Missing `dashboards.admin.assign-widgets`, or no tenant"),
        (status = 404, body = ErrorBody, description = "`Role not found` (also: another tenant's role, a super-admin role for other callers)"),
    )
)]
#[get("/dashboards/roles/widgets")]
pub async fn get_role_widgets(
    ctx: AuthContext,
    db: web::Data<Db>,
    roles: web::Data<dyn RoleDirectory>,
    query: Query<RoleWidgetsQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(crate::ASSIGN)?;
    let role = service::required_id(query.role_id.as_deref(), "roleId")?;
    let scope = service::read_scope(
        &ctx,
        query.tenant_id.as_deref(),
        query.organization_id.as_deref(),
    )?;
    let body = service::get_role_widgets(&db, roles.get_ref(), &ctx, role, scope).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// Sets a role's widgets in the caller's scope; an empty list removes them.
#[utoipa::path(
    tag = super::TAG,
    request_body = PutRoleWidgets,
    responses(
        (status = 200, body = RoleWidgetsSaved, description = "Saved; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid payload` (with `issues`), `Unknown widget ids: ...`"),
        (status = 403, body = ErrorBody, description = "Missing `dashboards.admin.assign-widgets`, no tenant, an organization outside the caller's, or a role the caller could not grant (`grant_not_allowed`, `organization_out_of_scope`)"),
        (status = 404, body = ErrorBody, description = "`Role not found` (also: another tenant's role, a super-admin role for other callers)"),
    )
)]
#[put("/dashboards/roles/widgets")]
pub async fn put_role_widgets(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<Registry>,
    services: web::Data<Services>,
    body: Json<PutRoleWidgets>,
) -> AppResult<HttpResponse> {
    ctx.require(crate::ASSIGN)?;
    let body = body.0;
    let (widget_ids, op) = service::put_role_widgets(
        &db,
        &registry,
        &*services.accounts,
        &ctx,
        body.role_id,
        body.widget_ids,
    )
    .await?;
    Ok(
        with_operation(HttpResponse::Ok(), &op).json(RoleWidgetsSaved {
            ok: true,
            widget_ids,
        }),
    )
}
