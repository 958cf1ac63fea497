//! `POST /attachments/transfer`: moves attachments between records of one entity.

use actix_web::{HttpResponse, post, web};
use serde_json::Value;
use stoa_acl::{AuthContext, Registry};
use stoa_core::AppResult;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;

use crate::dto::{TransferBody, Transferred};
use crate::error::AttachmentsError;
use crate::{MANAGE, service, upload};

/// Attachments of `entityId` among `attachmentIds` (and of `fromRecordId`
/// when given) move to `toRecordId`; ids of other entities, tenants or
/// organizations are skipped, and none matching is 404. `toRecordId` must
/// be a record of `entityId` the caller may write when a module declares
/// the entity (its organization becomes the attachments').
#[utoipa::path(
    tag = "Attachments",
    request_body = TransferBody,
    responses(
        (status = 200, body = Transferred),
        (status = 400, body = ErrorBody, description = "Invalid payload"),
        (status = 403, body = ErrorBody, description = "Missing feature (also the entity's view feature), or a target record outside the caller's organizations"),
        (status = 404, body = ErrorBody, description = "No attachment matched, or the target record does not exist in the caller's organizations"),
    )
)]
#[post("/attachments/transfer")]
pub async fn transfer_attachments(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<Registry>,
    bytes: web::Bytes,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    stoa_core::extract::check_json_body(&bytes)?;
    serde_json::from_slice::<Value>(&bytes).map_err(|_| AttachmentsError::InvalidPayload)?;
    let body: TransferBody = stoa_core::extract::parse_json(&bytes)?;
    let entity_id = body.entity_id.trim().to_string();
    let to_record_id = body.to_record_id.trim().to_string();
    let from_record_id = body.from_record_id.map(|s| s.trim().to_string());
    upload::check_identifier("entityId", &entity_id)?;
    upload::check_identifier("toRecordId", &to_record_id)?;
    if let Some(from) = &from_record_id {
        upload::check_identifier("fromRecordId", from)?;
    }
    let target = registry.record_target(&entity_id).cloned();
    let transfer = service::Transfer {
        ids: body.attachment_ids,
        entity_id,
        from_record_id,
        to_record_id,
    };
    let (updated, op) = service::transfer(&db, &ctx, target, transfer).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Transferred { ok: true, updated }))
}
