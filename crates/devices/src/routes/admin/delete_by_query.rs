//! `DELETE /devices/admin/devices?id=` (or body `{id}`): the collection
//! form of `DELETE /devices/admin/devices/{id}`.

use actix_web::{HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::collection::CollectionId;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;

use crate::dto::DeviceDeactivated;
use crate::service::writes::{deactivate_device, write_target};

/// The collection form of `DELETE /devices/admin/devices/{id}` (Open Mercato
/// clients): `?id=` or a JSON body `{id}`.
#[utoipa::path(
    tag = "Devices",
    params(("id" = Option<String>, Query, description = "Device id (uuid); may come in a JSON body `{id}` instead")),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = DeviceDeactivated, description = "Deactivated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/devices/admin/devices")]
pub async fn delete_admin_device_by_query(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: CollectionId,
) -> AppResult<HttpResponse> {
    let target = write_target(&ctx, id.raw(), true)?;
    let op = deactivate_device(&db, &ctx, target).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(DeviceDeactivated { ok: true }))
}
