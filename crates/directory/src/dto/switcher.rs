//! Shapes of the organization switcher (`/directory/organization-switcher`).

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// One organization of the menu.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SwitcherNode {
    pub id: Uuid,
    pub name: String,
    /// 0 for a root.
    pub depth: i32,
    /// `false` for an ancestor shown only to place an allowed organization.
    pub selectable: bool,
    #[schema(no_recursion)]
    pub children: Vec<SwitcherNode>,
}

/// A tenant a super admin may switch to.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SwitcherTenant {
    pub id: Uuid,
    pub name: String,
    pub is_active: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationSwitcher {
    /// Roots first; children by name.
    pub items: Vec<SwitcherNode>,
    /// The organization the caller works in (`null`: all of them).
    pub selected_id: Option<Uuid>,
    /// Holds `directory.organizations.manage`.
    pub can_manage: bool,
    /// Not restricted to some organizations.
    pub can_view_all_organizations: bool,
    pub tenant_id: Option<Uuid>,
    /// Every live tenant, for super admins only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenants: Option<Vec<SwitcherTenant>>,
    pub is_super_admin: bool,
}
