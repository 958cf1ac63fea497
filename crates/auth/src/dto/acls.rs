//! `/auth/roles/acl` and `/auth/users/acl` queries, bodies and answers.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RoleAclQuery {
    pub role_id: Uuid,
    /// The tenant the role must belong to (another tenant: super admins only).
    pub tenant_id: Option<Uuid>,
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct UserAclQuery {
    pub user_id: Uuid,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleAclView {
    pub is_super_admin: bool,
    pub features: Vec<String>,
    /// `null` = every organization.
    pub organizations: Option<Vec<Uuid>>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub updated_at: Option<OffsetDateTime>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserAclView {
    /// Whether an override replaces the user's role ACLs.
    pub has_custom_acl: bool,
    pub is_super_admin: bool,
    pub features: Vec<String>,
    pub organizations: Option<Vec<Uuid>>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub updated_at: Option<OffsetDateTime>,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleAclUpdate {
    pub role_id: Uuid,
    pub is_super_admin: Option<bool>,
    /// Replaces the granted features (ids or `module.*` wildcards).
    pub features: Option<Vec<String>>,
    /// `null` = every organization; omitted = unchanged.
    #[serde(default, deserialize_with = "stoa_core::serde_util::double_option")]
    #[schema(value_type = Option<Vec<Uuid>>)]
    pub organizations: Option<Option<Vec<Uuid>>>,
    pub tenant_id: Option<Uuid>,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserAclUpdate {
    pub user_id: Uuid,
    pub is_super_admin: Option<bool>,
    pub features: Option<Vec<String>>,
    #[serde(default, deserialize_with = "stoa_core::serde_util::double_option")]
    #[schema(value_type = Option<Vec<Uuid>>)]
    pub organizations: Option<Option<Vec<Uuid>>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AclSaved {
    pub ok: bool,
    /// Something in the request was dropped (unknown or not grantable here).
    pub sanitized: bool,
}
