//! `/auth/users` bodies, queries and answers (also the `{ok}` answer and the
//! `id` of deletes, which `/auth/roles` shares).

use serde::{Deserialize, Serialize};
use stoa_core::list::ListPage;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

/// `{ok: true}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Ok {
    pub ok: bool,
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IdQuery {
    pub id: Option<String>,
}

/// The alternative delete body `{id}`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct IdBody {
    pub id: Uuid,
}

#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct UserListQuery {
    /// One user by id (the item then carries `hasPassword`).
    pub id: Option<Uuid>,
    pub page: Option<u64>,
    /// 1–100, default 50.
    pub page_size: Option<u64>,
    /// Matches e-mail, organization name or role name (case-insensitive substring).
    #[validate(length(max = 200))]
    pub search: Option<String>,
    /// Matches the display name (case-insensitive substring).
    #[validate(length(max = 200))]
    pub name: Option<String>,
    pub organization_id: Option<Uuid>,
    /// Only users of the caller's active (selected) organization.
    pub scope_to_active_organization: Option<bool>,
    /// Users holding any of these roles; repeat the parameter or separate ids
    /// with commas (`roleId` is accepted too).
    #[serde(default, alias = "roleId")]
    #[param(value_type = Vec<String>)]
    pub role_ids: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserListItem {
    pub id: Uuid,
    pub email: String,
    pub name: Option<String>,
    pub organization_id: Option<Uuid>,
    pub organization_name: Option<String>,
    pub tenant_id: Option<Uuid>,
    pub tenant_name: Option<String>,
    /// Role names.
    pub roles: Vec<String>,
    pub role_ids: Vec<Uuid>,
    pub is_confirmed: bool,
    /// Only when the list was asked for one `id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_password: Option<bool>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub updated_at: Option<OffsetDateTime>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<UserListItem>,
    pub is_super_admin: bool,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateUser {
    #[validate(length(min = 3, max = 254))]
    pub email: String,
    // Checked by `stoa_core::text`.
    /// Trimmed; blank = none. Without invisible, control or formatting
    /// characters.
    #[validate(length(max = 120), custom(function = "stoa_core::text::validate_name"))]
    pub name: Option<String>,
    /// Must meet the password policy. Required unless `sendInviteEmail`.
    pub password: Option<String>,
    /// E-mails a 48-hour link to choose a password.
    pub send_invite_email: Option<bool>,
    /// The home organization; the user joins its tenant.
    pub organization_id: Uuid,
    /// Role ids or names (of that tenant).
    #[validate(length(max = 50))]
    pub roles: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Created {
    pub id: Uuid,
    /// `invite_email_failed` when the invitation could not be sent.
    #[serde(rename = "_warning", skip_serializing_if = "Option::is_none")]
    pub warning: Option<&'static str>,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateUser {
    pub id: Uuid,
    #[validate(length(min = 3, max = 254))]
    pub email: Option<String>,
    // Checked by `stoa_core::text`.
    /// `null` or blank clears the name. Without invisible, control or
    /// formatting characters.
    #[serde(default, deserialize_with = "stoa_core::serde_util::double_option")]
    #[schema(value_type = Option<String>)]
    #[validate(custom(function = "stoa_core::text::validate_name"))]
    pub name: Option<Option<String>>,
    pub password: Option<String>,
    /// Required when callers change their own e-mail or password (as in
    /// `PUT /auth/profile`).
    pub current_password: Option<String>,
    /// Moves the user (to that organization's tenant, for super admins).
    pub organization_id: Option<Uuid>,
    /// Replaces the memberships: role ids or names.
    #[validate(length(max = 50))]
    pub roles: Option<Vec<String>>,
}
