//! `/devices/admin/devices[/{id}]`: every user's devices in the caller's
//! tenant and organizations (`devices.admin`).

use actix_web::{HttpResponse, delete, get, post, put, web};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::collection::{CollectionId, WithId};
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Path, Query};

use super::{
    Access, authorize, device_actor, execute_deactivate, execute_register, execute_update,
    list_filter, list_request, parse_id, registration, run_list, write_target,
};
use crate::ADMIN;
use crate::dto::{
    AdminRegisterDevice, DeviceDeactivated, DeviceDetail, DeviceList, DeviceListQuery,
    DevicePayload, DeviceRegistered, DeviceUpdated, UpdateDevice,
};
use crate::error::DevicesError;
use crate::service::{self, Scope};

/// Lists the devices of every user in the caller's tenant and organizations;
/// `userId` narrows to one user.
#[utoipa::path(
    tag = "Devices",
    params(DeviceListQuery, ListParams),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = DeviceList),
        (status = 400, body = ErrorBody, description = "Invalid paging, filter, cursor or `ids`"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Missing `devices.admin`, or no tenant"),
    )
)]
#[get("/devices/admin/devices")]
pub async fn list_admin_devices(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<DeviceListQuery>,
    params: Query<ListParams>,
) -> AppResult<web::Json<DeviceList>> {
    ctx.require(ADMIN)?;
    let scope = Scope::of(&ctx)?;
    let req = list_request(&q, &params)?;
    let mut filter = list_filter(&q)?;
    filter.user_id = q.user_id;
    Ok(web::Json(run_list(&db, &scope, &filter, &req).await?))
}

/// Registers a device for a user of the tenant. The device goes to the
/// user's home organization, which the caller must be able to see.
#[utoipa::path(
    tag = "Devices",
    request_body = AdminRegisterDevice,
    security(("bearerAuth" = [])),
    responses(
        (status = 201, body = DeviceRegistered, description = "Registered; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid device payload`, or `Target user not found in this tenant`"),
        (status = 401, body = ErrorBody, description = "Not signed in, or an API key"),
        (status = 403, body = ErrorBody, description = "Missing `devices.admin`, or the user's organization is outside the caller's"),
        (status = 409, body = ErrorBody, description = "A concurrent registration of the same device won"),
    )
)]
#[post("/devices/admin/devices")]
pub async fn register_admin_device(
    ctx: AuthContext,
    db: web::Data<Db>,
    keys: web::Data<KeyRing>,
    users: web::Data<dyn UserDirectory>,
    body: DevicePayload<AdminRegisterDevice>,
) -> AppResult<HttpResponse> {
    device_actor(&ctx)?;
    ctx.require(ADMIN)?;
    let scope = Scope::of(&ctx)?;
    let (user, body) = body.into_inner().split();
    // The organization is the target user's (set once the user is checked);
    // the admin's own `Accept-Language` says nothing about the user's device.
    let registration = registration(&keys, scope.tenant_id, None, user, body, None)?;
    execute_register(&db, ctx.actor(), registration, Some((scope, user, users))).await
}

/// One device of the tenant, any user.
#[utoipa::path(
    tag = "Devices",
    params(("id" = String, Path, description = "Device id (uuid)")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = DeviceDetail),
        (status = 400, body = ErrorBody, description = "`Invalid device id`"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "`Access denied` (organization outside the caller's) or missing `devices.admin`"),
        (status = 404, body = ErrorBody, description = "`Device not found`"),
    )
)]
#[get("/devices/admin/devices/{id}")]
pub async fn get_admin_device(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
) -> AppResult<web::Json<DeviceDetail>> {
    ctx.require(ADMIN)?;
    let scope = Scope::of(&ctx)?;
    let id = parse_id(&id)?;
    let mut conn = db.conn().await?;
    let row = service::find_live(&mut conn, scope.tenant_id, id)
        .await?
        .ok_or(DevicesError::NotFound)?;
    authorize(&scope, Access::Admin, &row)?;
    Ok(web::Json(DeviceDetail { item: row.into() }))
}

/// Updates any device of the tenant (same body and rules as `PUT /devices/{id}`).
#[utoipa::path(
    tag = "Devices",
    params(("id" = String, Path, description = "Device id (uuid)")),
    request_body = UpdateDevice,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = DeviceUpdated, description = "Updated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/devices/admin/devices/{id}")]
pub async fn update_admin_device(
    ctx: AuthContext,
    db: web::Data<Db>,
    keys: web::Data<KeyRing>,
    id: Path<String>,
    body: DevicePayload<UpdateDevice>,
) -> AppResult<HttpResponse> {
    update_any(&ctx, &db, &keys, &id, body.into_inner()).await
}

/// The collection form of `PUT /devices/admin/devices/{id}` (Open Mercato
/// clients): the id comes in the body (`{id, ...}`) or as `?id=`.
#[utoipa::path(
    tag = "Devices",
    params(("id" = Option<String>, Query, description = "Device id (uuid), when not in the body")),
    request_body(content = UpdateDevice, description = "The fields of `PUT /devices/{id}` plus `id` (uuid)"),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = DeviceUpdated, description = "Updated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/devices/admin/devices")]
pub async fn update_admin_device_by_body(
    ctx: AuthContext,
    db: web::Data<Db>,
    keys: web::Data<KeyRing>,
    body: WithId<DevicePayload<UpdateDevice>>,
) -> AppResult<HttpResponse> {
    update_any(&ctx, &db, &keys, body.id.raw(), body.body.into_inner()).await
}

async fn update_any(
    ctx: &AuthContext,
    db: &Db,
    keys: &KeyRing,
    id: &str,
    body: UpdateDevice,
) -> AppResult<HttpResponse> {
    let (scope, access, id) = write_target(ctx, id, true)?;
    execute_update(db, keys, ctx.actor(), scope, access, id, body).await
}

/// Deactivates any device of the tenant.
#[utoipa::path(
    tag = "Devices",
    params(("id" = String, Path, description = "Device id (uuid)")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = DeviceDeactivated, description = "Deactivated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/devices/admin/devices/{id}")]
pub async fn delete_admin_device(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
) -> AppResult<HttpResponse> {
    deactivate_any(&ctx, &db, &id).await
}

/// The collection form of `DELETE /devices/admin/devices/{id}` (Open Mercato
/// clients): `?id=` or a JSON body `{id}`.
#[utoipa::path(
    tag = "Devices",
    params(("id" = Option<String>, Query, description = "Device id (uuid); may come in a JSON body `{id}` instead")),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = DeviceDeactivated, description = "Deactivated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/devices/admin/devices")]
pub async fn delete_admin_device_by_query(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: CollectionId,
) -> AppResult<HttpResponse> {
    deactivate_any(&ctx, &db, id.raw()).await
}

async fn deactivate_any(ctx: &AuthContext, db: &Db, id: &str) -> AppResult<HttpResponse> {
    let (scope, access, id) = write_target(ctx, id, true)?;
    execute_deactivate(db, ctx.actor(), scope, access, id).await
}
