//! `DELETE /devices/{id}`: deactivate (soft-delete) one of the caller's
//! devices.

use actix_web::{HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use crate::dto::DeviceDeactivated;
use crate::service::writes::{deactivate_device, write_target};

/// Deactivates an owned device; registering it again revives it.
#[utoipa::path(
    tag = "Devices",
    params(("id" = String, Path, description = "Device id (uuid)")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = DeviceDeactivated, description = "Deactivated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid device id`"),
        (status = 401, body = ErrorBody, description = "Not signed in, or an API key"),
        (status = 403, body = ErrorBody, description = "`Access denied` (another user's device) or missing `devices.manage`"),
        (status = 404, body = ErrorBody, description = "`Device not found`"),
    )
)]
#[delete("/devices/{id}")]
pub async fn delete_device(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
) -> AppResult<HttpResponse> {
    let target = write_target(&ctx, &id, false)?;
    let op = deactivate_device(&db, &ctx, target).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(DeviceDeactivated { ok: true }))
}
