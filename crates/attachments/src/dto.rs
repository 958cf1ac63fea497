//! Request and response types (the OpenAPI document's schemas).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_core::list::ListPage;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

/// `{ok: true}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Ok {
    pub ok: bool,
}

impl Ok {
    pub fn yes() -> Self {
        Self { ok: true }
    }
}

/// A link from an attachment to a record (`{type, id, href?, label?}`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, ToSchema, Validate)]
pub struct Assignment {
    #[serde(rename = "type")]
    #[validate(length(min = 1, max = 200))]
    pub kind: String,
    #[validate(length(min = 1, max = 200))]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[validate(length(max = 500))]
    pub href: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[validate(length(max = 200))]
    pub label: Option<String>,
}

/// The multipart form of `POST /attachments` (documentation only: the
/// route reads it as a stream).
#[derive(Debug, ToSchema)]
pub struct UploadForm {
    /// The entity the record belongs to, e.g. `catalog:catalog_product`.
    #[schema(rename = "entityId", example = "catalog:catalog_product")]
    pub entity_id: String,
    #[schema(rename = "recordId")]
    pub record_id: String,
    #[schema(value_type = String, format = Binary)]
    pub file: Vec<u8>,
    #[schema(rename = "partitionCode")]
    pub partition_code: Option<String>,
    /// A JSON array of strings or a comma-separated list.
    pub tags: Option<String>,
    /// A JSON array of `{type, id, href?, label?}`.
    pub assignments: Option<String>,
    /// A JSON object of flat keys with scalar or list values.
    #[schema(rename = "customFields")]
    pub custom_fields: Option<String>,
}

/// An uploaded attachment.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadedItem {
    pub id: Uuid,
    pub url: String,
    pub file_name: String,
    pub file_size: i64,
    pub mime_type: String,
    pub partition_code: String,
    pub thumbnail_url: String,
    pub content: Option<String>,
    pub tags: Vec<String>,
    pub assignments: Vec<Assignment>,
    pub custom_fields: Option<Value>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Uploaded {
    pub ok: bool,
    pub item: UploadedItem,
}

/// `GET /attachments` query.
#[derive(Debug, Deserialize, IntoParams, Validate)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RecordQuery {
    pub entity_id: Option<String>,
    pub record_id: Option<String>,
    #[validate(range(min = 1))]
    pub page: Option<i64>,
    #[validate(range(min = 1, max = 100))]
    pub page_size: Option<i64>,
}

/// An attachment of a record.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordItem {
    pub id: Uuid,
    pub url: String,
    pub file_name: String,
    pub file_size: i64,
    pub created_at: String,
    pub mime_type: Option<String>,
    pub partition_code: String,
    pub content: Option<String>,
    pub thumbnail_url: String,
    pub tags: Vec<String>,
    pub assignments: Vec<Assignment>,
}

/// Paging keys appear only when both `page` and `pageSize` were given.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordList {
    pub items: Vec<RecordItem>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_size: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_pages: Option<i64>,
}

/// `?id=` of `DELETE /attachments` and `DELETE /attachments/partitions`.
#[derive(Debug, Deserialize, IntoParams, Validate)]
#[into_params(parameter_in = Query)]
pub struct IdQuery {
    pub id: Option<String>,
}

/// `?download=1` of the file route.
#[derive(Debug, Deserialize, IntoParams, Validate)]
#[into_params(parameter_in = Query)]
pub struct FileQuery {
    /// `1` or `true`: always sent as a download.
    pub download: Option<String>,
}

/// Resize parameters of the image route (validated by the handler: any bad
/// value is 400 `Invalid size parameters`).
#[derive(Debug, Deserialize, IntoParams, Validate)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ImageQuery {
    /// 1–4000
    pub width: Option<String>,
    /// 1–4000
    pub height: Option<String>,
    /// `cover` (default) or `contain`
    pub crop_type: Option<String>,
}

/// A storage partition.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PartitionItem {
    pub id: Uuid,
    pub code: String,
    pub title: String,
    pub description: Option<String>,
    pub is_public: bool,
    pub requires_ocr: bool,
    pub ocr_model: Option<String>,
    pub storage_driver: String,
    pub config_json: Option<Value>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    /// For Open Mercato clients: the environment variable that sets the
    /// partition's local storage folder there (`ATTACHMENTS_PARTITION_<CODE>_ROOT`).
    pub env_key: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PartitionList {
    pub items: Vec<PartitionItem>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PartitionAnswer {
    pub item: PartitionItem,
}

/// `POST`/`PUT /attachments/partitions` body (`id` for `PUT`).
#[derive(Debug, Deserialize, ToSchema, Validate)]
#[serde(rename_all = "camelCase")]
pub struct PartitionBody {
    pub id: Option<Uuid>,
    #[validate(length(min = 2, max = 60), custom(function = "crate::dto::code_chars"))]
    pub code: String,
    #[validate(length(min = 1, max = 120))]
    pub title: String,
    #[validate(length(max = 500))]
    pub description: Option<String>,
    pub is_public: Option<bool>,
    pub requires_ocr: Option<bool>,
    #[validate(length(max = 50))]
    pub ocr_model: Option<String>,
    #[schema(example = "local")]
    #[validate(custom(function = "crate::dto::driver_name"))]
    pub storage_driver: Option<String>,
    pub config_json: Option<Value>,
}

pub fn code_chars(code: &str) -> Result<(), validator::ValidationError> {
    if code
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(())
    } else {
        Err(validator::ValidationError::new("code")
            .with_message("may only contain letters, digits, '_' and '-'".into()))
    }
}

pub fn driver_name(driver: &str) -> Result<(), validator::ValidationError> {
    if matches!(driver, "local" | "s3") {
        Ok(())
    } else {
        Err(validator::ValidationError::new("storageDriver")
            .with_message("must be local or s3".into()))
    }
}

/// `GET /attachments/library` query (any bad value: 400 `Invalid query`).
#[derive(Debug, Deserialize, IntoParams, Validate)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct LibraryQuery {
    pub page: Option<String>,
    /// 1–100, default 25
    pub page_size: Option<String>,
    /// Case-insensitive part of the file name.
    pub search: Option<String>,
    /// A partition code.
    pub partition: Option<String>,
    /// Comma-separated; an attachment must carry all of them.
    pub tags: Option<String>,
    /// `fileName`, `fileSize` or `createdAt` (default)
    pub sort_field: Option<String>,
    /// `asc` or `desc` (default)
    pub sort_dir: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LibraryItem {
    pub id: Uuid,
    pub file_name: String,
    pub file_size: i64,
    pub mime_type: String,
    pub partition_code: String,
    pub partition_title: Option<String>,
    pub url: String,
    pub created_at: String,
    pub tags: Vec<String>,
    pub assignments: Vec<Assignment>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thumbnail_url: Option<String>,
    pub content: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PartitionSummary {
    pub code: String,
    pub title: String,
    pub description: Option<String>,
    pub is_public: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LibraryList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<LibraryItem>,
    pub available_tags: Vec<String>,
    pub partitions: Vec<PartitionSummary>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LibraryDetail {
    pub id: Uuid,
    pub file_name: String,
    pub file_size: i64,
    pub mime_type: String,
    pub partition_code: String,
    pub partition_title: Option<String>,
    pub tags: Vec<String>,
    pub assignments: Vec<Assignment>,
    pub content: Option<String>,
    pub custom_fields: Option<Value>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LibraryDetailAnswer {
    pub item: LibraryDetail,
}

/// `PATCH /attachments/library/{id}`: what is given replaces what is stored.
#[derive(Debug, Deserialize, ToSchema, Validate)]
#[serde(rename_all = "camelCase")]
pub struct LibraryPatch {
    pub tags: Option<Vec<String>>,
    pub assignments: Option<Vec<Assignment>>,
    /// A flat object; `null` clears it.
    #[serde(default, deserialize_with = "crate::dto::present")]
    #[schema(value_type = Option<Object>)]
    pub custom_fields: Option<Option<Value>>,
}

/// Keeps an explicit `null` apart from an omitted key.
pub fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<Value>>, D::Error> {
    Ok(Some(Option::<Value>::deserialize(d)?))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchedItem {
    pub id: Uuid,
    pub tags: Vec<String>,
    pub assignments: Vec<Assignment>,
    pub custom_fields: Option<Value>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Patched {
    pub ok: bool,
    pub item: PatchedItem,
}

/// `POST /attachments/transfer`.
#[derive(Debug, Deserialize, ToSchema, Validate)]
#[serde(rename_all = "camelCase")]
pub struct TransferBody {
    #[validate(length(min = 1, max = 200))]
    pub entity_id: String,
    #[validate(length(min = 1, max = 100))]
    pub attachment_ids: Vec<Uuid>,
    #[validate(length(min = 1, max = 200))]
    pub from_record_id: Option<String>,
    #[validate(length(min = 1, max = 200))]
    pub to_record_id: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Transferred {
    pub ok: bool,
    pub updated: usize,
}
