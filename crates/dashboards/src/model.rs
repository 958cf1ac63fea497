//! The stored rows, as the whole states undo writes back.
//!
//! Every row is keyed by (owner, tenant, organization of the caller's token);
//! its id is derived from that key ([`row_id`]), so clearing a row and
//! writing it again keeps the id, and undo, redo and a concurrent first write
//! all lock and load the same id.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// The id of the row of `kind` for `owner` (a user or a role) in (`tenant`,
/// `organization`): a name-based uuid (version 8) of the key.
pub fn row_id(kind: &str, owner: Uuid, tenant: Uuid, organization: Option<Uuid>) -> Uuid {
    let mut hash = Sha256::new();
    hash.update(kind.as_bytes());
    hash.update(owner.as_bytes());
    hash.update(tenant.as_bytes());
    hash.update(organization.unwrap_or_default().as_bytes());
    let digest = hash.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

/// The scope rows are keyed by: the caller's tenant and token organization.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
}

/// One item of a layout, as stored and returned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LayoutItem {
    pub id: Uuid,
    pub widget_id: String,
    pub order: i64,
    pub priority: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub settings: Option<Value>,
}

/// A layout item's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    Sm,
    Md,
    Lg,
}

impl From<stoa_acl::slots::WidgetSize> for Size {
    fn from(size: stoa_acl::slots::WidgetSize) -> Self {
        match size {
            stoa_acl::slots::WidgetSize::Sm => Self::Sm,
            stoa_acl::slots::WidgetSize::Md => Self::Md,
            stoa_acl::slots::WidgetSize::Lg => Self::Lg,
        }
    }
}

/// A user's dashboard layout in one scope.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayoutState {
    pub id: Uuid,
    pub user_id: Uuid,
    pub scope: Scope,
    pub items: Vec<LayoutItem>,
}

/// The widgets of a role in one scope.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleWidgetsState {
    pub id: Uuid,
    pub role_id: Uuid,
    pub scope: Scope,
    pub widget_ids: Vec<String>,
}

/// A user's own widgets in one scope (`override` replaces the roles' widgets).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserWidgetsState {
    pub id: Uuid,
    pub user_id: Uuid,
    pub scope: Scope,
    pub mode: Mode,
    pub widget_ids: Vec<String>,
}

/// Whether a user's widgets replace the roles' (`override`) or not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Inherit,
    Override,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inherit => "inherit",
            Self::Override => "override",
        }
    }
    pub fn parse(text: &str) -> Self {
        if text == "override" {
            Self::Override
        } else {
            Self::Inherit
        }
    }
}

pub const LAYOUT_KIND: &str = "dashboards.layout";
pub const ROLE_WIDGETS_KIND: &str = "dashboards.role_widgets";
pub const USER_WIDGETS_KIND: &str = "dashboards.user_widgets";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_ids_are_stable_per_key_and_differ_between_keys() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        assert_eq!(
            row_id(LAYOUT_KIND, a, b, None),
            row_id(LAYOUT_KIND, a, b, None)
        );
        assert_ne!(
            row_id(LAYOUT_KIND, a, b, None),
            row_id(LAYOUT_KIND, a, b, Some(a))
        );
        assert_ne!(
            row_id(LAYOUT_KIND, a, b, None),
            row_id(USER_WIDGETS_KIND, a, b, None)
        );
        assert_ne!(
            row_id(LAYOUT_KIND, a, b, None),
            row_id(LAYOUT_KIND, b, a, None)
        );
    }
}
