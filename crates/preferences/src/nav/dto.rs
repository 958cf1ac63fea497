//! The shapes of the navigation payload, and what building it needs.

use serde::{Deserialize, Serialize};
use stoa_acl::Registry;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use crate::sidebar::SidebarSettings;

/// One sidebar link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NavItem {
    pub id: String,
    pub href: String,
    /// The label shown (after preferences).
    pub title: String,
    /// The label before the caller's own preference (role preferences included).
    pub default_title: String,
    pub enabled: bool,
    /// `main`.
    pub page_context: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon_name: Option<String>,
}

/// A sidebar group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NavGroup {
    pub id: String,
    pub name: String,
    pub default_name: String,
    pub items: Vec<NavItem>,
}

/// A link of a settings or profile section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct SectionItem {
    pub id: String,
    pub label: String,
    pub href: String,
    pub order: i32,
    #[serde(rename = "iconName", skip_serializing_if = "Option::is_none")]
    pub icon_name: Option<String>,
}

/// A settings or profile section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Section {
    pub id: String,
    pub label: String,
    pub order: i32,
    pub items: Vec<SectionItem>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrandLogo {
    pub src: String,
    pub alt: String,
    pub preserve_aspect_ratio: bool,
}

/// The selected organization's branding (only when it has a logo).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Brand {
    pub name: String,
    pub logo: BrandLogo,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct CurrentOrganization {
    pub id: Uuid,
    pub name: String,
}

/// `GET /auth/admin/nav`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NavPayload {
    pub groups: Vec<NavGroup>,
    pub settings_sections: Vec<Section>,
    pub settings_path_prefixes: Vec<String>,
    pub profile_sections: Vec<Section>,
    pub profile_path_prefixes: Vec<String>,
    /// Concrete feature ids the caller holds (wildcards expanded over the registry).
    pub granted_features: Vec<String>,
    pub roles: Vec<String>,
    /// `null` unless a concrete organization is selected and has a logo.
    pub brand: Option<Brand>,
    /// `null` unless a concrete organization is selected.
    pub current_organization: Option<CurrentOrganization>,
}

/// The selected organization as the navigation shows it.
#[derive(Clone, Debug)]
pub struct OrganizationInfo {
    pub id: Uuid,
    pub name: String,
    pub logo_url: Option<String>,
    pub logo_preserve_aspect_ratio: bool,
}

/// Everything [`build`] needs besides the caller.
pub struct NavInput<'a> {
    pub registry: &'a Registry,
    pub role_preference: Option<&'a SidebarSettings>,
    pub user_preference: Option<&'a SidebarSettings>,
    pub organization: Option<OrganizationInfo>,
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct NavQuery {
    /// Build the navigation for this organization (a uuid, or `__all__`)
    /// instead of the selected one; it must be one the caller may act in.
    pub org_id: Option<String>,
    /// Super admins: build it for this tenant. Others may name only their own.
    pub tenant_id: Option<String>,
}
