//! `POST /attachments`: the file streams into storage first (bounded by the
//! size limit), then its content is checked, its partition resolved and its
//! row written under the tenant's quota lock. Any failure after the file was
//! stored deletes it again, so a refused upload leaves nothing behind.

use actix_web::HttpRequest;
use actix_web::http::header::CONTENT_TYPE;
use serde_json::Value;
use stoa_acl::{AuthContext, RecordTarget, Registry};
use stoa_core::AppError;
use stoa_core::command::Operation;
use stoa_core::db::Db;
use stoa_core::storage::Storage;
use stoa_core::upload::actix_multipart::Multipart;
use stoa_core::upload::{self, StoredFile, Upload, UploadPolicy};
use uuid::Uuid;

use crate::commands::{CreateAttachment, NewAttachment};
use crate::config::AttachmentsConfig;
use crate::dto::Assignment;
use crate::error::AttachmentsError;
use crate::model::{Attachment, Partition, default_partition_for};
use crate::{partitions, sniff, store};

/// The library's own entity: its files are not linked to a record.
pub const LIBRARY_ENTITY: &str = "attachments:library";
/// Text kept in `content` at most (bytes read from the file's start).
pub const MAX_CONTENT_BYTES: usize = 256 * 1024;

mod fields;
pub use fields::{
    check_custom_fields, check_identifier, normalize_assignments, normalize_tags, parse_tags,
};
use fields::{parse_assignments, parse_custom_fields};

/// 400 unless the request is `multipart/form-data`.
pub fn check_multipart(req: &HttpRequest) -> Result<(), AttachmentsError> {
    let multipart = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("multipart/form-data")
        });
    if multipart {
        Ok(())
    } else {
        Err(AttachmentsError::NotMultipart)
    }
}

/// Receives, checks and records one upload.
pub async fn upload(
    req: &HttpRequest,
    payload: Multipart,
    db: &Db,
    storage: &Storage,
    config: &AttachmentsConfig,
    ctx: &AuthContext,
    registry: &Registry,
) -> Result<(Attachment, Operation), AppError> {
    check_multipart(req)?;
    let tenant = ctx.tenant()?;
    // The selected organization, else the caller's own (the reference's token
    // org): where files of records no module declares go. A declared
    // record's files go to the record's organization.
    let organization = ctx
        .organization_id()
        .or(ctx.home_organization_id)
        .ok_or(AttachmentsError::OrganizationRequired)?;
    ctx.require_organizations([Some(organization)])?;
    let id = Uuid::new_v4();
    let key = store::original(tenant, id);
    let policy = UploadPolicy {
        max_file_bytes: config.max_upload_bytes,
        max_files: 1,
        max_field_bytes: 64 * 1024,
        max_fields: 16,
    };
    let received = upload::receive(req, payload, storage, &policy, |_| key.clone()).await?;
    let result = record(
        &received,
        id,
        tenant,
        organization,
        db,
        storage,
        config,
        ctx,
        registry,
    )
    .await;
    if result.is_err() {
        received.discard(storage).await;
    }
    result
}

#[expect(
    clippy::too_many_arguments,
    reason = "the services an upload writes through, each handed in by the route"
)]
async fn record(
    received: &Upload,
    id: Uuid,
    tenant: Uuid,
    organization: Uuid,
    db: &Db,
    storage: &Storage,
    config: &AttachmentsConfig,
    ctx: &AuthContext,
    registry: &Registry,
) -> Result<(Attachment, Operation), AppError> {
    let field = |name: &str| {
        received
            .field(name)
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let file: Option<&StoredFile> = received.files.iter().find(|f| f.meta.field == "file");
    let (Some(entity_id), Some(record_id), Some(file)) =
        (field("entityId"), field("recordId"), file)
    else {
        return Err(AttachmentsError::UploadFieldsRequired.into());
    };
    check_identifier("entityId", entity_id)?;
    check_identifier("recordId", record_id)?;
    let raw_name = file.meta.file_name.clone().unwrap_or_default();
    sniff::check_name(&raw_name)?;
    let tags = parse_tags(received.field("tags"))?;
    let mut assignments = parse_assignments(received.field("assignments"))?;
    let custom_fields = parse_custom_fields(received.field("customFields"))?;
    if entity_id != LIBRARY_ENTITY {
        assignments.retain(|a| !(a.kind == entity_id && a.id == record_id));
        assignments.push(Assignment {
            kind: entity_id.to_string(),
            id: record_id.to_string(),
            ..Default::default()
        });
    }

    let scanned = store::scan(storage, &file.key)
        .await
        .map_err(AppError::from_api)?;
    if scanned.size == 0 {
        return Err(AttachmentsError::EmptyFile.into());
    }
    let mime = sniff::detect(&raw_name, file.meta.content_type.as_deref(), &scanned.head)?;
    let file_name = sniff::sanitize_file_name(&raw_name);

    let mut conn = db.conn().await?;
    let partition =
        resolve_partition(&mut conn, ctx, tenant, entity_id, field("partitionCode")).await?;
    drop(conn);
    let target = registry.record_target(entity_id).cloned();
    // Records no module declares cannot be checked: their files never go
    // public (README.md, "Deliberate differences").
    if target.is_none() && partition.is_public {
        return Err(AttachmentsError::PublicPartitionUndeclared.into());
    }
    let content = if partition.requires_ocr {
        extract_text(storage, &file.key, &mime, scanned.size).await
    } else {
        None
    };
    let command = CreateAttachment {
        row: NewAttachment {
            id,
            tenant_id: tenant,
            organization_id: organization,
            entity_id: entity_id.to_string(),
            record_id: record_id.to_string(),
            partition_code: partition.code,
            file_name,
            mime_type: mime,
            file_size: i64::try_from(scanned.size).unwrap_or(i64::MAX),
            checksum: scanned.checksum,
            storage_driver: storage.kind().to_string(),
            storage_key: file.key.to_string(),
            tags,
            assignments: serde_json::to_value(&assignments).unwrap_or(Value::Array(Vec::new())),
            custom_fields,
            content,
        },
        quota_bytes: config.tenant_quota_bytes,
    };
    let actor = ctx.actor();
    let caller = ctx.clone();
    let record_id = record_id.to_string();
    db.transaction::<_, AppError, _>(|conn| {
        Box::pin(async move {
            let mut command = command;
            if let Some(organization) =
                writable_record(conn, target.as_ref(), &caller, "recordId", &record_id).await?
            {
                command.row.organization_id = organization;
            }
            stoa_core::command::execute(conn, &actor, command).await
        })
    })
    .await
}

/// The organization of the record a write attaches to, asked of the
/// entity's owner (`stoa_acl::RecordTarget`): 404 when the caller's tenant
/// has no such record or it is in an organization the caller does not see,
/// 403 when the caller may not write it or lacks the features to see the
/// entity. `None` for entities no module declares (nothing to check) and
/// for tenant-wide records.
pub async fn writable_record(
    conn: &mut diesel_async::AsyncPgConnection,
    target: Option<&RecordTarget>,
    ctx: &AuthContext,
    field: &'static str,
    record_id: &str,
) -> Result<Option<Uuid>, AppError> {
    match target {
        Some(target) => {
            target
                .require_writable(conn, ctx, record_id, || {
                    AttachmentsError::RecordNotFound(field).into()
                })
                .await
        }
        None => Ok(None),
    }
}

/// The explicit partition when the caller may use it (a public one only
/// when it is the entity's default), else the entity's default.
async fn resolve_partition(
    conn: &mut diesel_async::AsyncPgConnection,
    ctx: &AuthContext,
    tenant: Uuid,
    entity_id: &str,
    requested: Option<&str>,
) -> Result<Partition, AppError> {
    let default_code = default_partition_for(entity_id);
    if let Some(code) = requested {
        let plain = code.len() <= 60
            && code
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !plain {
            return Err(AttachmentsError::UnknownPartition.into());
        }
        let partition = partitions::usable(conn, ctx, tenant, code)
            .await?
            .ok_or(AttachmentsError::UnknownPartition)?;
        if partition.is_public && partition.code != default_code {
            return Err(AttachmentsError::PublicPartitionSelected.into());
        }
        return Ok(partition);
    }
    Ok(partitions::usable(conn, ctx, tenant, default_code)
        .await?
        .ok_or(AttachmentsError::PartitionNotConfigured)?)
}

/// Plain text of text files (the first 256 KiB, as UTF-8); other types
/// (images, PDF, DOCX) get none — see README.md.
async fn extract_text(
    storage: &Storage,
    key: &stoa_core::storage::StorageKey,
    mime: &str,
    size: u64,
) -> Option<String> {
    if let Some(document) = crate::extract::Document::of(mime) {
        if size > crate::extract::MAX_INPUT {
            return None;
        }
        let end = size.checked_sub(1)?;
        let bytes = store::read_range(storage, key, 0..=end).await.ok()?;
        return crate::extract::text(document, bytes.to_vec()).await;
    }
    let textual = mime.starts_with("text/") || mime == "application/json";
    if !textual {
        return None;
    }
    let end = size.min(MAX_CONTENT_BYTES as u64).checked_sub(1)?;
    let bytes = store::read_range(storage, key, 0..=end).await.ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let text: String = text
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t' | '\r'))
        .collect();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}
