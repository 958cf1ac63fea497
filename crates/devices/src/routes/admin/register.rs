//! `POST /devices/admin/devices`.

use actix_web::{HttpResponse, post, web};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::AppResult;
use stoa_core::command::with_operation;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;

use crate::ADMIN;
use crate::dto::{AdminRegisterDevice, DevicePayload, DeviceRegistered};
use crate::service::Scope;
use crate::service::writes::{device_actor, register_device, registration};

/// Registers a device for a user of the tenant. The device goes to the
/// user's home organization, which the caller must be able to see.
#[utoipa::path(
    tag = "Devices",
    request_body = AdminRegisterDevice,
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
    let (registered, op) =
        register_device(&db, &ctx, registration, Some((scope, user, users))).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(registered))
}
