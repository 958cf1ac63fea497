//! `POST /devices`: registers a device of the caller (idempotent upsert).

use actix_web::{HttpRequest, HttpResponse, post, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::command::with_operation;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;

use crate::MANAGE;
use crate::dto::{DevicePayload, DeviceRegistered, RegisterDevice};
use crate::service::write_organization;
use crate::service::writes::{self, device_actor, registration};

/// Registers a device for the caller in its selected (else home)
/// organization. The same `deviceId` again updates the device, and revives
/// it when it was deactivated (`revived: true`). Without `locale`, a new
/// device gets the best match of `Accept-Language`.
#[utoipa::path(
    tag = "Devices",
    request_body = RegisterDevice,
    responses(
        (status = 201, body = DeviceRegistered, description = "Registered; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid device payload` (with `details` and `issues`)"),
        (status = 401, body = ErrorBody, description = "Not signed in, or an API key"),
        (status = 403, body = ErrorBody, description = "Missing `devices.manage`, or no tenant"),
        (status = 409, body = ErrorBody, description = "A concurrent registration of the same device won"),
    )
)]
#[post("/devices")]
pub async fn register_device(
    req: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    keys: web::Data<KeyRing>,
    body: DevicePayload<RegisterDevice>,
) -> AppResult<HttpResponse> {
    let user = device_actor(&ctx)?;
    ctx.require(MANAGE)?;
    let tenant = ctx.tenant()?;
    let registration = registration(
        &keys,
        tenant,
        write_organization(&ctx),
        user,
        body.into_inner(),
        Some(&req),
    )?;
    let (registered, op) = writes::register_device(&db, &ctx, registration, None).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(registered))
}
