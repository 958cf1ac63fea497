//! Shapes of the organization endpoints (`/directory/organizations`): the
//! three list views and the create/update bodies with their field checks.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OrganizationView {
    #[default]
    Options,
    Tree,
    Manage,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StatusFilter {
    #[default]
    All,
    Active,
    Inactive,
}

#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct OrganizationListQuery {
    #[param(inline)]
    pub view: Option<OrganizationView>,
    /// Comma-separated organization ids.
    #[validate(length(max = 10000))]
    pub ids: Option<String>,
    /// A tenant id (super admins: any, or `all`); others may only name their own.
    pub tenant_id: Option<String>,
    #[validate(length(max = 200))]
    pub search: Option<String>,
    pub page: Option<u64>,
    pub page_size: Option<u64>,
    #[param(inline)]
    pub status: Option<StatusFilter>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationOption {
    pub id: Uuid,
    pub name: String,
    pub logo_url: Option<String>,
    pub logo_preserve_aspect_ratio: bool,
    pub parent_id: Option<Uuid>,
    pub tenant_id: Uuid,
    pub is_active: bool,
    pub depth: i32,
    pub tree_path: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationNode {
    pub id: Uuid,
    pub name: String,
    pub parent_id: Option<Uuid>,
    pub tenant_id: Uuid,
    pub depth: i32,
    pub ancestor_ids: Vec<Uuid>,
    pub child_ids: Vec<Uuid>,
    pub descendant_ids: Vec<Uuid>,
    pub is_active: bool,
    pub tree_path: String,
    pub path_label: String,
    #[schema(no_recursion)]
    pub children: Vec<OrganizationNode>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationManageItem {
    pub id: Uuid,
    pub name: String,
    pub slug: Option<String>,
    pub logo_url: Option<String>,
    pub logo_preserve_aspect_ratio: bool,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    pub tenant_id: Uuid,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant_name: Option<String>,
    pub parent_id: Option<Uuid>,
    pub parent_name: Option<String>,
    pub depth: i32,
    pub root_id: Uuid,
    pub tree_path: String,
    pub path_label: String,
    pub ancestor_ids: Vec<Uuid>,
    pub child_ids: Vec<Uuid>,
    pub descendant_ids: Vec<Uuid>,
    pub children_count: usize,
    pub descendants_count: usize,
    pub is_active: bool,
}

/// `GET /directory/organizations` answers one of three shapes, by `view`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum OrganizationList {
    Options {
        items: Vec<OrganizationOption>,
    },
    Tree {
        items: Vec<OrganizationNode>,
    },
    #[serde(rename_all = "camelCase")]
    Manage {
        items: Vec<OrganizationManageItem>,
        total: u64,
        page: u64,
        page_size: u64,
        total_pages: u64,
        is_super_admin: bool,
    },
}

fn validate_slug(slug: &str) -> Result<(), validator::ValidationError> {
    let ok = !slug.is_empty()
        && slug
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(validator::ValidationError::new("slug")
            .with_message("slug may contain only a-z, 0-9, '-' and '_'".into()))
    }
}

/// A slug as clients send it: trimmed and lower-cased first (the reference's
/// order), so `Sales-EU` is stored as `sales-eu`; anything else outside
/// `a-z 0-9 - _` (inner spaces included) is refused.
fn validate_slug_input(slug: &str) -> Result<(), validator::ValidationError> {
    validate_slug(&slug.trim().to_lowercase())
}

fn validate_logo_url(url: &str) -> Result<(), validator::ValidationError> {
    let ok = url.starts_with("https://")
        || url.starts_with("http://")
        || url.starts_with("/api/attachments/image/")
        || url.starts_with("/api/attachments/file/");
    if ok && !url.chars().any(char::is_whitespace) {
        Ok(())
    } else {
        Err(validator::ValidationError::new("url")
            .with_message("logoUrl must be an http(s) URL or an /api/attachments/ path".into()))
    }
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateOrganization {
    pub tenant_id: Option<Uuid>,
    #[validate(length(min = 1, max = 200))]
    pub name: String,
    #[validate(length(max = 150), custom(function = "validate_slug_input"))]
    pub slug: Option<String>,
    #[validate(length(max = 2048), custom(function = "validate_logo_url"))]
    pub logo_url: Option<String>,
    pub logo_preserve_aspect_ratio: Option<bool>,
    pub is_active: Option<bool>,
    pub parent_id: Option<Uuid>,
    #[validate(length(max = 1000))]
    pub child_ids: Option<Vec<Uuid>>,
}

/// A partial update: omitted fields keep their stored values; `parentId: null`
/// makes the organization a root; `childIds` re-parents exactly those children.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateOrganization {
    pub id: Uuid,
    /// Accepted for compatibility; an organization never changes tenant.
    pub tenant_id: Option<Uuid>,
    #[validate(length(min = 1, max = 200))]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "stoa_core::serde_util::double_option")]
    #[schema(value_type = Option<String>)]
    pub slug: Option<Option<String>>,
    #[serde(default, deserialize_with = "stoa_core::serde_util::double_option")]
    #[schema(value_type = Option<String>)]
    pub logo_url: Option<Option<String>>,
    pub logo_preserve_aspect_ratio: Option<bool>,
    pub is_active: Option<bool>,
    #[serde(default, deserialize_with = "stoa_core::serde_util::double_option")]
    #[schema(value_type = Option<Uuid>)]
    pub parent_id: Option<Option<Uuid>>,
    #[validate(length(max = 1000))]
    pub child_ids: Option<Vec<Uuid>>,
}

impl UpdateOrganization {
    /// Field checks `validator` cannot express on double options.
    pub fn check(&self) -> Result<(), String> {
        if let Some(Some(slug)) = &self.slug
            && (slug.len() > 150 || validate_slug_input(slug).is_err())
        {
            return Err("slug: may contain only a-z, 0-9, '-' and '_' (at most 150)".into());
        }
        if let Some(Some(url)) = &self.logo_url
            && (url.len() > 2048 || validate_logo_url(url).is_err())
        {
            return Err("logoUrl: must be an http(s) URL or an /api/attachments/ path".into());
        }
        Ok(())
    }
}
