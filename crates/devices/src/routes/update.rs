//! `PUT /devices/{id}` and its collection form `PUT /devices {id, ...}`:
//! change the metadata of one of the caller's devices.

use actix_web::{HttpResponse, put, web};
use stoa_acl::AuthContext;
use stoa_core::collection::WithId;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use super::{execute_update, write_target};
use crate::dto::{DevicePayload, DeviceUpdated, UpdateDevice};

/// Updates an owned device. Fields are tri-state (absent keeps, `null`
/// clears); `pushToken` (even `null`, when the OS revoked permission) stamps
/// `push_token_updated_at`; `lastSeenAt` defaults to now.
#[utoipa::path(
    tag = "Devices",
    params(("id" = String, Path, description = "Device id (uuid)")),
    request_body = UpdateDevice,
    security(("bearerAuth" = [])),
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
    update_own(&ctx, &db, &keys, &id, body.into_inner()).await
}

/// The collection form of `PUT /devices/{id}` (Open Mercato clients): the
/// device id comes in the body (`{id, ...}`) or as `?id=`; same rules.
#[utoipa::path(
    tag = "Devices",
    params(("id" = Option<String>, Query, description = "Device id (uuid), when not in the body")),
    request_body(content = UpdateDevice, description = "The fields of `PUT /devices/{id}` plus `id` (uuid)"),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = DeviceUpdated, description = "Updated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid device id` (also: none sent) or `Invalid device payload`"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
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
    update_own(&ctx, &db, &keys, body.id.raw(), body.body.into_inner()).await
}

/// Both forms of the self-service update.
async fn update_own(
    ctx: &AuthContext,
    db: &Db,
    keys: &KeyRing,
    id: &str,
    body: UpdateDevice,
) -> AppResult<HttpResponse> {
    let (scope, access, id) = write_target(ctx, id, false)?;
    execute_update(db, keys, ctx.actor(), scope, access, id, body).await
}
