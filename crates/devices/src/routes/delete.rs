//! `DELETE /devices/{id}` and its collection form `DELETE /devices?id=`:
//! deactivate (soft-delete) one of the caller's devices.

use actix_web::{HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::collection::CollectionId;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use super::{execute_deactivate, write_target};
use crate::dto::DeviceDeactivated;

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
    deactivate_own(&ctx, &db, &id).await
}

/// The collection form of `DELETE /devices/{id}` (Open Mercato clients):
/// `?id=` or a JSON body `{id}`; same rules.
#[utoipa::path(
    tag = "Devices",
    params(("id" = Option<String>, Query, description = "Device id (uuid); may come in a JSON body `{id}` instead")),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = DeviceDeactivated, description = "Deactivated; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "`Invalid device id` (also: none sent)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/devices")]
pub async fn delete_device_by_query(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: CollectionId,
) -> AppResult<HttpResponse> {
    deactivate_own(&ctx, &db, id.raw()).await
}

/// Both forms of the self-service deactivation.
async fn deactivate_own(ctx: &AuthContext, db: &Db, id: &str) -> AppResult<HttpResponse> {
    let (scope, access, id) = write_target(ctx, id, false)?;
    execute_deactivate(db, ctx.actor(), scope, access, id).await
}
