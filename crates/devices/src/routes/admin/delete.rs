//! `DELETE /devices/admin/devices/{id}`.

use actix_web::{HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use crate::dto::DeviceDeactivated;
use crate::service::writes::{deactivate_device, write_target};

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
    let target = write_target(&ctx, &id, true)?;
    let op = deactivate_device(&db, &ctx, target).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(DeviceDeactivated { ok: true }))
}
