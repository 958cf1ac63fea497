//! Rows of the module's tables and what the action log shows of them.

use diesel::prelude::*;
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::dto::{Assignment, PartitionItem};
use crate::schema::{attachment_partitions, attachments};

/// The codes of the partitions every installation has; they cannot be removed.
pub const PRODUCTS_MEDIA: &str = "productsMedia";
pub const PRIVATE_ATTACHMENTS: &str = "privateAttachments";
pub const DEFAULT_CODES: &[&str] = &[PRODUCTS_MEDIA, PRIVATE_ATTACHMENTS];

/// The default partition of an entity's files.
pub fn default_partition_for(entity_id: &str) -> &'static str {
    if entity_id == "catalog:catalog_product" {
        PRODUCTS_MEDIA
    } else {
        PRIVATE_ATTACHMENTS
    }
}

#[derive(Clone, Debug, Queryable, Selectable, Serialize, PartialEq)]
#[diesel(table_name = attachment_partitions)]
#[serde(rename_all = "camelCase")]
pub struct Partition {
    pub id: Uuid,
    pub code: String,
    pub title: String,
    pub description: Option<String>,
    pub storage_driver: String,
    pub config_json: Option<Value>,
    pub is_public: bool,
    pub requires_ocr: bool,
    pub ocr_model: Option<String>,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    #[serde(skip)]
    pub created_at: OffsetDateTime,
    #[serde(skip)]
    pub updated_at: OffsetDateTime,
}

pub fn iso(at: OffsetDateTime) -> String {
    stoa_core::serde_util::timestamp::format(at)
}

/// `ATTACHMENTS_PARTITION_<CODE>_ROOT` with the code's camelCase split by `_`.
pub fn env_key(code: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in code.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            out.push('_');
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        });
    }
    let collapsed = out
        .split('_')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    format!("ATTACHMENTS_PARTITION_{collapsed}_ROOT")
}

impl Partition {
    pub fn item(&self) -> PartitionItem {
        PartitionItem {
            id: self.id,
            code: self.code.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            is_public: self.is_public,
            requires_ocr: self.requires_ocr,
            ocr_model: self.ocr_model.clone(),
            storage_driver: self.storage_driver.clone(),
            config_json: self.config_json.clone(),
            created_at: Some(iso(self.created_at)),
            updated_at: Some(iso(self.updated_at)),
            env_key: env_key(&self.code),
        }
    }
}

#[derive(Clone, Debug, Queryable, Selectable, Serialize, PartialEq)]
#[diesel(table_name = attachments)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub entity_id: String,
    pub record_id: String,
    pub partition_code: String,
    pub file_name: String,
    pub mime_type: String,
    pub file_size: i64,
    pub checksum: String,
    pub storage_driver: String,
    pub storage_key: String,
    pub tags: Vec<String>,
    pub assignments: Value,
    pub custom_fields: Option<Value>,
    #[serde(skip)]
    pub content: Option<String>,
    #[serde(skip)]
    pub created_at: OffsetDateTime,
}

impl Attachment {
    pub fn url(&self) -> String {
        format!("/api/attachments/file/{}", self.id)
    }

    pub fn thumbnail_url(&self, size: u32) -> String {
        format!(
            "/api/attachments/image/{}/{}?width={size}&height={size}",
            self.id,
            crate::sniff::slug(&self.file_name)
        )
    }

    pub fn assignment_list(&self) -> Vec<Assignment> {
        serde_json::from_value(self.assignments.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_keys_follow_the_reference() {
        assert_eq!(
            env_key("productsMedia"),
            "ATTACHMENTS_PARTITION_PRODUCTS_MEDIA_ROOT"
        );
        assert_eq!(
            env_key("my-files_2"),
            "ATTACHMENTS_PARTITION_MY_FILES_2_ROOT"
        );
    }
}
