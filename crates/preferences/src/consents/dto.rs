//! Request and response shapes of the consents list.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use super::{ConsentKey, ConsentRow};

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ConsentQuery {
    /// The user whose consents to list (uuid, required).
    pub user_id: Option<String>,
}

/// One consent record.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsentItem {
    pub id: Uuid,
    pub consent_type: String,
    pub is_granted: bool,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub granted_at: Option<OffsetDateTime>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub withdrawn_at: Option<OffsetDateTime>,
    pub source: Option<String>,
    pub ip_address: Option<String>,
    /// Whether the record's integrity hash still matches its fields.
    pub integrity_valid: bool,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub updated_at: Option<OffsetDateTime>,
}

impl ConsentItem {
    /// The record as listed, with its integrity checked under `key`.
    pub fn new(row: ConsentRow, key: &ConsentKey) -> Self {
        Self {
            integrity_valid: row.integrity_valid(key),
            id: row.id,
            consent_type: row.consent_type,
            is_granted: row.is_granted,
            granted_at: row.granted_at,
            withdrawn_at: row.withdrawn_at,
            source: row.source,
            ip_address: row.ip_address,
            created_at: row.created_at,
            updated_at: Some(row.updated_at),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ConsentList {
    pub ok: bool,
    /// Newest first.
    pub items: Vec<ConsentItem>,
}
