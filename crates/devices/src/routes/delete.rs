//! `DELETE /devices/{id}` and `DELETE /devices/admin/devices/{id}`, each
//! also in the collection form Open Mercato clients send (`?id=` or a JSON
//! body `{id}`): four routes of one write, [`deactivate`] (a soft delete;
//! registering the device again revives it), which differ only in where
//! the id comes from and whose devices the caller may reach.

use actix_web::{HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::collection::CollectionId;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use crate::dto::DeviceDeactivated;
use crate::service::writes::{deactivate_device, write_target};

/// The deactivation every form runs: the device named by `raw_id`, the
/// caller's own or (`admin`) any user's device of the caller's scope.
async fn deactivate(
    db: &Db,
    ctx: &AuthContext,
    raw_id: &str,
    admin: bool,
) -> AppResult<HttpResponse> {
    let target = write_target(ctx, raw_id, admin)?;
    let op = deactivate_device(db, ctx, target).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(DeviceDeactivated { ok: true }))
}

/// Deactivates an owned device; registering it again revives it.
#[utoipa::path(
    tag = "Devices",
    params(("id" = String, Path, description = "Device id (uuid)")),
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
    deactivate(&db, &ctx, &id, false).await
}

/// The collection form of `DELETE /devices/{id}` (Open Mercato clients):
/// `?id=` or a JSON body `{id}`; same rules.
#[utoipa::path(
    tag = "Devices",
    params(("id" = Option<String>, Query, description = "Device id (uuid); may come in a JSON body `{id}` instead")),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
    responses(
        (status = 200, body = DeviceDeactivated, description = "Deactivated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid device id` (also: none sent)"),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/devices")]
pub async fn delete_device_by_query(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: CollectionId,
) -> AppResult<HttpResponse> {
    deactivate(&db, &ctx, id.raw(), false).await
}

/// Deactivates any device of the tenant.
#[utoipa::path(
    tag = "Devices",
    params(("id" = String, Path, description = "Device id (uuid)")),
    responses(
        (status = 200, body = DeviceDeactivated, description = "Deactivated; `x-om-operation` carries the undo token"),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/devices/admin/devices/{id}")]
pub async fn delete_admin_device(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
) -> AppResult<HttpResponse> {
    deactivate(&db, &ctx, &id, true).await
}

/// The collection form of `DELETE /devices/admin/devices/{id}` (Open Mercato
/// clients): `?id=` or a JSON body `{id}`.
#[utoipa::path(
    tag = "Devices",
    params(("id" = Option<String>, Query, description = "Device id (uuid); may come in a JSON body `{id}` instead")),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
    responses(
        (status = 200, body = DeviceDeactivated, description = "Deactivated; `x-om-operation` carries the undo token"),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/devices/admin/devices")]
pub async fn delete_admin_device_by_query(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: CollectionId,
) -> AppResult<HttpResponse> {
    deactivate(&db, &ctx, id.raw(), true).await
}
