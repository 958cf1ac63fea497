//! `/auth/roles` bodies, queries and answers.

use serde::{Deserialize, Serialize};
use stoa_core::list::ListPage;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RoleListQuery {
    pub id: Option<Uuid>,
    pub page: Option<u64>,
    /// 1–100, default 50.
    pub page_size: Option<u64>,
    /// Case-insensitive substring of the name.
    #[validate(length(max = 200))]
    pub search: Option<String>,
    /// Another tenant's roles (super admins only).
    pub tenant_id: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleItem {
    pub id: Uuid,
    pub name: String,
    /// Live users holding the role.
    pub users_count: i64,
    pub tenant_id: Option<Uuid>,
    pub tenant_name: Option<String>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub updated_at: Option<OffsetDateTime>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<RoleItem>,
    pub is_super_admin: bool,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateRole {
    // Checked and folded by `stoa_core::text`.
    /// Without invisible, control or formatting characters; stored in
    /// Unicode NFKC form.
    #[validate(
        length(min = 2, max = 100),
        custom(function = "stoa_core::text::validate_name")
    )]
    pub name: String,
    /// Defaults to the caller's tenant; `null` is refused (no global roles).
    #[serde(default, deserialize_with = "stoa_core::serde_util::double_option")]
    #[schema(value_type = Option<Uuid>)]
    pub tenant_id: Option<Option<Uuid>>,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRole {
    pub id: Uuid,
    // Checked and folded by `stoa_core::text`.
    /// Without invisible, control or formatting characters; stored in
    /// Unicode NFKC form.
    #[validate(
        length(min = 2, max = 100),
        custom(function = "stoa_core::text::validate_name")
    )]
    pub name: Option<String>,
    /// Moves the role to another tenant (super admins only; its ACL is reset).
    pub tenant_id: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RoleCreated {
    pub id: Uuid,
}
