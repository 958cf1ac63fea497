//! `PUT /devices/admin/devices/{id}`.

use actix_web::{HttpResponse, put, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use crate::dto::{DevicePayload, DeviceUpdated, UpdateDevice};
use crate::service::writes::{update_device, write_target};

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
    let target = write_target(&ctx, &id, true)?;
    let (updated, op) = update_device(&db, &keys, &ctx, target, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(updated))
}
