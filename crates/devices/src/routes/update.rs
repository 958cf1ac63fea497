//! `PUT /devices/{id}`: change the metadata of one of the caller's devices.

use actix_web::{HttpResponse, put, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use crate::dto::{DevicePayload, DeviceUpdated, UpdateDevice};
use crate::service::writes::{self, write_target};

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
    let target = write_target(&ctx, &id, false)?;
    let (updated, op) = writes::update_device(&db, &keys, &ctx, target, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(updated))
}
