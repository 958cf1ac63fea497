//! `GET /attachments/file/{id}`: the stored file, ranged and with an ETag,
//! never run as a page of the API's origin.

use actix_web::{get, web};
use stoa_acl::OptionalAuth;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::Download;
use stoa_core::storage::Storage;
use stoa_core::{AppResult, Path, Query};

use crate::dto::FileQuery;
use crate::error::AttachmentsError;
use crate::sniff::INLINE_IMAGE_TYPES;
use crate::{access, store};

use super::parse_id;

/// Images a browser may show are sent inline with their type (unless
/// `?download=1`); everything else as `application/octet-stream` to save.
/// Every answer carries a sandboxing `Content-Security-Policy` and `nosniff`.
#[utoipa::path(
    tag = "Attachments",
    params(("id" = String, Path, description = "Attachment id"), FileQuery),
    security((), ("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 200, description = "The file", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 206, description = "A part of the file (Range)", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 400, body = ErrorBody, description = "Malformed id"),
        (status = 401, body = ErrorBody, description = "A private partition's file without credentials"),
        (status = 404, body = ErrorBody),
        (status = 416, description = "Unsatisfiable range"),
        (status = 500, body = ErrorBody, description = "Partition misconfigured"),
    )
)]
#[get("/attachments/file/{id}")]
pub async fn serve_file(
    auth: OptionalAuth,
    db: web::Data<Db>,
    storage: web::Data<Storage>,
    id: Path<String>,
    q: Query<FileQuery>,
) -> AppResult<Download> {
    let id = parse_id(Some(id.as_str()), AttachmentsError::IdRequired)?;
    if auth.as_ref().is_none() {
        // An anonymous read of a file in a public partition: the file's
        // tenant is not known before the lookup (audited bypass, stoa_core::rls).
        stoa_core::rls::set_request_scope(stoa_core::rls::bypass_scope("public attachment"));
    }
    let mut conn = db.conn().await?;
    let file = access::readable(&mut conn, id, auth.as_ref()).await?;
    drop(conn);
    let row = file.row;
    let key = store::original(row.tenant_id, row.id);
    // The row may outlive its object only by a failure: answer 404, not 500.
    if storage
        .size(&key)
        .await
        .map_err(stoa_core::AppError::from_api)?
        .is_none()
    {
        return Err(AttachmentsError::FileUnavailable.into());
    }
    let forced = q
        .download
        .as_deref()
        .is_some_and(|d| matches!(d.trim(), "1" | "true"));
    let inline = !forced && INLINE_IMAGE_TYPES.contains(&row.mime_type.as_str());
    let content_type = if inline {
        row.mime_type.clone()
    } else {
        "application/octet-stream".to_string()
    };
    let length = u64::try_from(row.file_size).unwrap_or(0);
    let source = storage.get_ref().clone();
    let download = Download::ranged(row.file_name.clone(), content_type, length, move |range| {
        store::range_stream(source, key, range)
    })
    .etag(&row.checksum)
    .cache_control(if file.partition.is_public {
        "public, max-age=86400"
    } else {
        "private, max-age=60"
    })
    .sandboxed();
    Ok(if inline { download.inline() } else { download })
}
