//! Rows of `user_devices` and what the API shows of them.
//!
//! [`DeviceRow`] never holds the push token: it selects the token's
//! fingerprint instead (stored beside the encrypted token), so the secret
//! does not reach Rust memory on reads, logs or snapshots.

use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::schema::user_devices;

/// What kind of client a device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[schema(as = DevicePlatform)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Ios,
    Android,
    Web,
}

impl Platform {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ios => "ios",
            Self::Android => "android",
            Self::Web => "web",
        }
    }
}

/// One device, as read from the table: the push token (encrypted at rest,
/// see [`crate::secrets`]) is not selected, only its fingerprint.
#[derive(Clone, Debug, PartialEq, Queryable, Selectable)]
#[diesel(table_name = user_devices)]
#[diesel(check_for_backend(diesel::pg::Pg))]
pub struct DeviceRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub user_id: Uuid,
    pub device_id: String,
    pub platform: String,
    pub client_app_version: Option<String>,
    pub os_version: Option<String>,
    pub locale: Option<String>,
    /// Computed when the token is stored ([`crate::secrets::fingerprint`]).
    pub push_token_fingerprint: Option<String>,
    pub push_provider: Option<String>,
    pub push_token_updated_at: Option<OffsetDateTime>,
    pub last_seen_at: OffsetDateTime,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub deleted_at: Option<OffsetDateTime>,
}

// snake_case keys, as the reference sends them.
/// A device as the API lists it (snake_case keys).
/// The push token is never included.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct DeviceItem {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub user_id: Uuid,
    pub device_id: String,
    /// `ios`, `android` or `web`.
    pub platform: String,
    pub client_app_version: Option<String>,
    pub os_version: Option<String>,
    pub locale: Option<String>,
    pub push_provider: Option<String>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub push_token_updated_at: Option<OffsetDateTime>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub last_seen_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<DeviceRow> for DeviceItem {
    fn from(row: DeviceRow) -> Self {
        Self {
            id: row.id,
            tenant_id: row.tenant_id,
            organization_id: row.organization_id,
            user_id: row.user_id,
            device_id: row.device_id,
            platform: row.platform,
            client_app_version: row.client_app_version,
            os_version: row.os_version,
            locale: row.locale,
            push_provider: row.push_provider,
            push_token_updated_at: row.push_token_updated_at,
            last_seen_at: row.last_seen_at,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// What undo and redo put back: a device's metadata and whether it is live
/// (`stoa_core::command::Tracked`, implemented in [`crate::commands`]).
///
/// The push fields (provider, token fingerprint, token time) are here only so
/// the action log's snapshots show them; undo and redo never write them
/// (`Tracked::keep_protected` keeps the current ones) and the token itself is
/// never part of it.
///
/// Equality treats `deleted_at` as "deactivated or not": a state written back
/// as deactivated keeps its row's own deactivation time.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceState {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub user_id: Uuid,
    pub device_id: String,
    pub platform: String,
    pub client_app_version: Option<String>,
    pub os_version: Option<String>,
    pub locale: Option<String>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub last_seen_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    pub deleted_at: Option<OffsetDateTime>,
    pub push_provider: Option<String>,
    pub push_token_fingerprint: Option<String>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    pub push_token_updated_at: Option<OffsetDateTime>,
    /// The change a forward write applies (`Resource::save` of a device
    /// runs it in one statement and returns the row as stored, so the
    /// entry's "after" is what was written). Never recorded, compared or
    /// shown: undo and redo write the recorded metadata back instead.
    #[serde(skip)]
    pub change: Option<std::sync::Arc<crate::queries::Change>>,
}

impl PartialEq for DeviceState {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.tenant_id == other.tenant_id
            && self.organization_id == other.organization_id
            && self.user_id == other.user_id
            && self.device_id == other.device_id
            && self.platform == other.platform
            && self.client_app_version == other.client_app_version
            && self.os_version == other.os_version
            && self.locale == other.locale
            && self.last_seen_at == other.last_seen_at
            && self.deleted_at.is_some() == other.deleted_at.is_some()
            && self.push_provider == other.push_provider
            && self.push_token_fingerprint == other.push_token_fingerprint
            && self.push_token_updated_at == other.push_token_updated_at
    }
}

impl From<&DeviceRow> for DeviceState {
    fn from(row: &DeviceRow) -> Self {
        Self {
            id: row.id,
            tenant_id: row.tenant_id,
            organization_id: row.organization_id,
            user_id: row.user_id,
            device_id: row.device_id.clone(),
            platform: row.platform.clone(),
            client_app_version: row.client_app_version.clone(),
            os_version: row.os_version.clone(),
            locale: row.locale.clone(),
            last_seen_at: row.last_seen_at,
            deleted_at: row.deleted_at,
            push_provider: row.push_provider.clone(),
            push_token_fingerprint: row.push_token_fingerprint.clone(),
            push_token_updated_at: row.push_token_updated_at,
            change: None,
        }
    }
}
