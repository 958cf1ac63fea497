//! `PUT /devices {id, ...}` (or `?id=`): the collection form of
//! `PUT /devices/{id}`, as Open Mercato clients send it.

use actix_web::{HttpResponse, put, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::collection::WithId;
use stoa_core::command::with_operation;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;

use crate::dto::{DevicePayload, DeviceUpdated, UpdateDevice};
use crate::service::writes::{update_device, write_target};

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
    let target = write_target(&ctx, body.id.raw(), false)?;
    let (updated, op) = update_device(&db, &keys, &ctx, target, body.body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(updated))
}
