//! `GET /devices/admin/devices/{id}`.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use crate::ADMIN;
use crate::dto::DeviceDetail;
use crate::service::Scope;
use crate::service::writes::{device_detail, parse_id};

/// One device of the tenant, any user.
#[utoipa::path(
    tag = "Devices",
    params(("id" = String, Path, description = "Device id (uuid)")),
    responses(
        (status = 200, body = DeviceDetail),
        (status = 400, body = ErrorBody, description = "`Invalid device id`"),
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
    Ok(web::Json(device_detail(&db, &scope, id).await?))
}
