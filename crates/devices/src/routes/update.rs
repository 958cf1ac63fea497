//! `PUT /devices/{id}` and `PUT /devices/admin/devices/{id}`, each also in
//! the collection form Open Mercato clients send (`PUT /devices {id, ...}`
//! or `?id=`): four routes of one write, [`update`], which differ only in
//! where the id comes from and whose devices the caller may reach.

use actix_web::{HttpResponse, put, web};
use stoa_acl::AuthContext;
use stoa_core::collection::WithId;
use stoa_core::command::with_operation;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use crate::dto::{DevicePayload, DeviceUpdated, UpdateDevice};
use crate::service::writes::{self, write_target};

/// The update every form runs: the device named by `raw_id`, the caller's
/// own or (`admin`) any user's device of the caller's scope.
async fn update(
    db: &Db,
    keys: &KeyRing,
    ctx: &AuthContext,
    raw_id: &str,
    admin: bool,
    body: UpdateDevice,
) -> AppResult<HttpResponse> {
    let target = write_target(ctx, raw_id, admin)?;
    let (updated, op) = writes::update_device(db, keys, ctx, target, body).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(updated))
}

/// Updates an owned device. Fields are tri-state (absent keeps, `null`
/// clears); `pushToken` (even `null`, when the OS revoked permission) stamps
/// `push_token_updated_at`; `lastSeenAt` defaults to now.
#[utoipa::path(
    tag = "Devices",
    params(("id" = String, Path, description = "Device id (uuid)")),
    request_body = UpdateDevice,
    responses(
        (status = 200, body = DeviceUpdated, description = "Updated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid device id` or `Invalid device payload`"),
        (status = 401, body = ErrorBody, description = "Not signed in, or an API key"),
        (status = 403, body = ErrorBody, description = "`Access denied` (another user's device) or missing `devices.manage`"),
        (status = 404, body = ErrorBody, description = "`Device not found` (also: other tenants and organizations)"),
    )
)]
#[put("/devices/{id}")]
pub async fn update_device(
    ctx: AuthContext,
    db: web::Data<Db>,
    keys: web::Data<KeyRing>,
    id: Path<String>,
    body: DevicePayload<UpdateDevice>,
) -> AppResult<HttpResponse> {
    update(&db, &keys, &ctx, &id, false, body.into_inner()).await
}

/// The collection form of `PUT /devices/{id}` (Open Mercato clients): the
/// device id comes in the body (`{id, ...}`) or as `?id=`; same rules.
#[utoipa::path(
    tag = "Devices",
    params(("id" = Option<String>, Query, description = "Device id (uuid), when not in the body")),
    request_body(content = UpdateDevice, description = "The fields of `PUT /devices/{id}` plus `id` (uuid)"),
    responses(
        (status = 200, body = DeviceUpdated, description = "Updated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid device id` (also: none sent) or `Invalid device payload`"),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/devices")]
pub async fn update_device_by_body(
    ctx: AuthContext,
    db: web::Data<Db>,
    keys: web::Data<KeyRing>,
    body: WithId<DevicePayload<UpdateDevice>>,
) -> AppResult<HttpResponse> {
    update(
        &db,
        &keys,
        &ctx,
        body.id.raw(),
        false,
        body.body.into_inner(),
    )
    .await
}

/// Updates any device of the tenant (same body and rules as `PUT /devices/{id}`).
#[utoipa::path(
    tag = "Devices",
    params(("id" = String, Path, description = "Device id (uuid)")),
    request_body = UpdateDevice,
    responses(
        (status = 200, body = DeviceUpdated, description = "Updated; `x-om-operation` carries the undo token"),
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
    update(&db, &keys, &ctx, &id, true, body.into_inner()).await
}

/// The collection form of `PUT /devices/admin/devices/{id}` (Open Mercato
/// clients): the id comes in the body (`{id, ...}`) or as `?id=`.
#[utoipa::path(
    tag = "Devices",
    params(("id" = Option<String>, Query, description = "Device id (uuid), when not in the body")),
    request_body(content = UpdateDevice, description = "The fields of `PUT /devices/{id}` plus `id` (uuid)"),
    responses(
        (status = 200, body = DeviceUpdated, description = "Updated; `x-om-operation` carries the undo token"),
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
    update(
        &db,
        &keys,
        &ctx,
        body.id.raw(),
        true,
        body.body.into_inner(),
    )
    .await
}
