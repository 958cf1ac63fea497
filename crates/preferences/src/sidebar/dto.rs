//! Request and response shapes of the sidebar endpoints.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use super::settings::{SettingsInput, SidebarSettings};
use super::variants::VariantRow;

/// A role of the tenant, and whether it has a preference in this locale.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleEntry {
    pub id: Uuid,
    pub name: String,
    pub has_preference: bool,
}

/// Which preference a request reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum PreferenceScope {
    /// The caller's own preference.
    User,
    /// A role's preference (needs `auth.sidebar.manage`).
    Role {
        #[serde(rename = "roleId")]
        role_id: Uuid,
    },
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PreferenceQuery {
    /// Read this role's preference instead of the caller's (needs `auth.sidebar.manage`).
    pub role_id: Option<Uuid>,
}

/// A sidebar preference and what the caller may do with it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreferenceResponse {
    pub locale: String,
    pub settings: SidebarSettings,
    /// Whether the caller holds `auth.sidebar.manage`.
    pub can_apply_to_roles: bool,
    /// The tenant's roles (managers only; empty otherwise).
    pub roles: Vec<RoleEntry>,
    pub scope: PreferenceScope,
    /// When the preference was last written (`null` when never).
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub updated_at: Option<OffsetDateTime>,
}

/// `PUT /auth/sidebar/preferences`. The settings go in `settings`; the same
/// fields at the top level are accepted too (as Open Mercato clients send
/// them), but not both at once.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreferenceUpdate {
    pub settings: Option<SettingsInput>,
    #[serde(flatten)]
    pub top_level: SettingsInput,
    /// Default `{type:"user"}`.
    pub scope: Option<PreferenceScope>,
    /// User scope only: copy the settings to these roles of the tenant.
    pub apply_to_roles: Option<Vec<Uuid>>,
    /// User scope only: remove these roles' preferences (in this locale).
    pub clear_role_ids: Option<Vec<Uuid>>,
}

/// The saved preference, plus the roles it was copied to or cleared from.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreferenceUpdated {
    #[serde(flatten)]
    pub preference: PreferenceResponse,
    pub applied_roles: Vec<Uuid>,
    pub cleared_roles: Vec<Uuid>,
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RolePreferenceQuery {
    /// The role whose preference (in this tenant and locale) goes. Required.
    pub role_id: Option<Uuid>,
}

/// `{ok:true, scope:{type:"role", roleId}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RolePreferenceDeleted {
    pub ok: bool,
    pub scope: PreferenceScope,
}

/// A named sidebar setup of the caller.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariantItem {
    pub id: Uuid,
    pub name: String,
    pub is_active: bool,
    pub settings: SidebarSettings,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub updated_at: Option<OffsetDateTime>,
}

impl From<VariantRow> for VariantItem {
    fn from(row: VariantRow) -> Self {
        Self {
            id: row.id,
            name: row.name,
            is_active: row.is_active,
            settings: SidebarSettings::from_stored(row.settings),
            created_at: row.created_at,
            updated_at: Some(row.updated_at),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct VariantList {
    pub locale: String,
    /// Live variants, oldest first.
    pub variants: Vec<VariantItem>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct VariantResponse {
    pub locale: String,
    pub variant: VariantItem,
}

/// `POST /auth/sidebar/variants`; `PUT /auth/sidebar/variants/{id}` takes the
/// same fields and changes only those sent.
#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariantInput {
    /// 1–120 characters. On create, omitted or blank picks "My preferences",
    /// "My preferences 2", …
    #[schema(max_length = 120)]
    pub name: Option<String>,
    pub settings: Option<SettingsInput>,
    /// `true` deactivates the caller's other variants.
    pub is_active: Option<bool>,
}

/// `{ok:true}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct VariantDeleted {
    pub ok: bool,
}
