//! `POST /attachments`: the file streams into storage first (bounded by the
//! size limit), then its content is checked, its partition resolved and its
//! row written under the tenant's quota lock. Any failure after the file was
//! stored deletes it again, so a refused upload leaves nothing behind.

use std::collections::HashSet;

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
use validator::Validate;

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
const MAX_TAGS: usize = 50;
const MAX_ASSIGNMENTS: usize = 100;
const MAX_CUSTOM_FIELDS: usize = 50;
const MAX_CUSTOM_FIELDS_BYTES: usize = 16 * 1024;

/// Entity and record ids are stored and compared, never used as paths; they
/// are still kept to a plain alphabet so nothing that looks like a path
/// (`../`, encoded separators, NUL) is accepted.
pub fn check_identifier(field: &'static str, value: &str) -> Result<(), AttachmentsError> {
    let ok = !value.is_empty()
        && value.len() <= 200
        && !value.contains("..")
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(AttachmentsError::InvalidIdentifier(field))
    }
}

/// Tags from a JSON array of strings or a comma list: trimmed, non-empty,
/// de-duplicated, order kept.
pub fn parse_tags(raw: Option<&str>) -> Result<Vec<String>, AttachmentsError> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(Vec::new());
    };
    let list: Vec<String> = if raw.starts_with('[') {
        serde_json::from_str(raw).map_err(|_| AttachmentsError::InvalidField("tags"))?
    } else {
        raw.split(',').map(String::from).collect()
    };
    normalize_tags(list)
}

pub fn normalize_tags(list: Vec<String>) -> Result<Vec<String>, AttachmentsError> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for tag in list {
        let tag = tag.trim().to_string();
        if tag.is_empty() {
            continue;
        }
        if tag.chars().count() > 100 || tag.chars().any(char::is_control) {
            return Err(AttachmentsError::InvalidField("tags"));
        }
        if seen.insert(tag.clone()) {
            out.push(tag);
        }
    }
    if out.len() > MAX_TAGS {
        return Err(AttachmentsError::InvalidField("tags"));
    }
    Ok(out)
}

/// Assignments need a type and an id; the last of one `type:id` wins.
pub fn normalize_assignments(list: Vec<Assignment>) -> Result<Vec<Assignment>, AttachmentsError> {
    let mut out: Vec<Assignment> = Vec::new();
    for mut item in list {
        item.kind = item.kind.trim().to_string();
        item.id = item.id.trim().to_string();
        if item.validate().is_err() {
            return Err(AttachmentsError::InvalidField("assignments"));
        }
        out.retain(|a| !(a.kind == item.kind && a.id == item.id));
        out.push(item);
    }
    if out.len() > MAX_ASSIGNMENTS {
        return Err(AttachmentsError::InvalidField("assignments"));
    }
    Ok(out)
}

fn parse_assignments(raw: Option<&str>) -> Result<Vec<Assignment>, AttachmentsError> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(Vec::new());
    };
    let list: Vec<Assignment> =
        serde_json::from_str(raw).map_err(|_| AttachmentsError::InvalidField("assignments"))?;
    normalize_assignments(list)
}

/// Custom fields: a flat object (keys of letters, digits and `_`), each value
/// a scalar or a list of scalars, at most 50 keys and 16 KiB.
pub fn check_custom_fields(value: Value) -> Result<Option<Value>, AttachmentsError> {
    let invalid = AttachmentsError::InvalidField("customFields");
    let Value::Object(map) = value else {
        return match value {
            Value::Null => Ok(None),
            _ => Err(invalid),
        };
    };
    if map.len() > MAX_CUSTOM_FIELDS {
        return Err(invalid);
    }
    let scalar = |v: &Value| {
        matches!(
            v,
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)
        )
    };
    for (key, value) in &map {
        let key_ok = !key.is_empty()
            && key.len() <= 100
            && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        let value_ok = scalar(value)
            || matches!(value, Value::Array(items) if items.len() <= 100 && items.iter().all(scalar));
        if !key_ok || !value_ok {
            return Err(invalid);
        }
    }
    let size = serde_json::to_vec(&map)
        .map(|v| v.len())
        .unwrap_or(usize::MAX);
    if size > MAX_CUSTOM_FIELDS_BYTES {
        return Err(invalid);
    }
    Ok((!map.is_empty()).then_some(Value::Object(map)))
}

fn parse_custom_fields(raw: Option<&str>) -> Result<Option<Value>, AttachmentsError> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let value: Value =
        serde_json::from_str(raw).map_err(|_| AttachmentsError::InvalidField("customFields"))?;
    check_custom_fields(value)
}

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

#[allow(clippy::too_many_arguments)]
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
