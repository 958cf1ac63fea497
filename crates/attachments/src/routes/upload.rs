//! `POST /attachments`: a multipart upload streamed into storage.

use actix_web::{HttpRequest, HttpResponse, post, web};
use stoa_acl::{AuthContext, Registry};
use stoa_core::AppResult;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::storage::Storage;
use stoa_core::upload::actix_multipart::Multipart;

use crate::config::AttachmentsConfig;
use crate::dto::{UploadForm, Uploaded, UploadedItem};
use crate::{MANAGE, upload};

/// Uploads a file for a record (`entityId`, `recordId`, `file`; optional
/// `partitionCode`, `tags`, `assignments`, `customFields`).
#[utoipa::path(
    tag = "Attachments",
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, body = Uploaded),
        (status = 400, body = ErrorBody, description = "Not multipart, missing fields, executable or active content, a file that is not what it claims, unknown partition"),
        (status = 403, body = ErrorBody, description = "Missing feature (also the record's entity's view feature), organization or record out of scope, an explicitly chosen public partition, or a public partition for an entity no module declares"),
        (status = 404, body = ErrorBody, description = "The record (entityId, recordId) does not exist in the caller's organizations"),
        (status = 413, body = ErrorBody, description = "File over the size limit or the tenant's quota"),
    )
)]
#[post("/attachments")]
pub async fn upload_attachment(
    ctx: AuthContext,
    req: HttpRequest,
    payload: Multipart,
    db: web::Data<Db>,
    storage: web::Data<Storage>,
    config: web::Data<AttachmentsConfig>,
    registry: web::Data<Registry>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let (row, op) = upload::upload(&req, payload, &db, &storage, &config, &ctx, &registry).await?;
    let item = UploadedItem {
        id: row.id,
        url: row.url(),
        thumbnail_url: row.thumbnail_url(320),
        file_name: row.file_name.clone(),
        file_size: row.file_size,
        mime_type: row.mime_type.clone(),
        partition_code: row.partition_code.clone(),
        content: row.content.clone(),
        tags: row.tags.clone(),
        assignments: row.assignment_list(),
        custom_fields: row.custom_fields.clone(),
    };
    Ok(with_operation(HttpResponse::Ok(), &op).json(Uploaded { ok: true, item }))
}
