//! Request and response shapes of the API-key endpoints. No response shape
//! has a field for the hash, and only [`CreatedApiKey`] carries the secret.

use serde::{Deserialize, Serialize};
use stoa_core::list::ListPage;
use stoa_core::serde_util::double_option;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::{Validate, ValidationError};

/// `GET /api_keys/keys` query.
#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ApiKeyListQuery {
    /// Page number, from 1 (default 1).
    pub page: Option<u64>,
    /// Items per page, 1–200 (default 20).
    pub page_size: Option<u64>,
    /// Part of the name or of the key prefix, case-insensitive.
    #[validate(length(max = 200))]
    pub search: Option<String>,
}

/// A role a key carries (`name` is null once the role is deleted).
#[derive(Clone, Debug, Serialize, ToSchema, PartialEq, Eq)]
pub struct ApiKeyRole {
    pub id: Uuid,
    pub name: Option<String>,
}

/// A key as listed: never the secret or its hash.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyItem {
    pub id: Uuid,
    pub name: String,
    pub description: Option<String>,
    #[schema(example = "omk_1a2b3c4d")]
    pub key_prefix: String,
    pub organization_id: Option<Uuid>,
    pub organization_name: Option<String>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_used_at: Option<OffsetDateTime>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<OffsetDateTime>,
    pub roles: Vec<ApiKeyRole>,
}

// `totalPages` 0 for an empty result: as the reference reports it for keys.
/// `{items, total, page, pageSize, totalPages}`; `totalPages` is 0 for an
/// empty result.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<ApiKeyItem>,
}

fn not_blank(value: &str) -> Result<(), ValidationError> {
    if value.trim().is_empty() {
        Err(ValidationError::new("blank").with_message("must not be blank".into()))
    } else {
        Ok(())
    }
}

fn role_tokens(roles: &[String]) -> Result<(), ValidationError> {
    if roles.iter().any(|r| r.trim().is_empty() || r.len() > 200) {
        Err(ValidationError::new("role")
            .with_message("each role must be a role id or a name of 1 to 200 characters".into()))
    } else {
        Ok(())
    }
}

/// `POST /api_keys/keys` body.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateApiKey {
    /// 1–120 characters.
    #[validate(length(min = 1, max = 120), custom(function = "not_blank"))]
    pub name: String,
    /// At most 1000 characters.
    #[serde(default)]
    #[validate(length(max = 1000))]
    pub description: Option<String>,
    /// The tenant the key belongs to (default: the caller's); another tenant
    /// needs a super admin.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Uuid>)]
    pub tenant_id: Option<Option<Uuid>>,
    /// The organization the key is bound to (default: the selected, else the
    /// caller's home organization).
    #[serde(default)]
    pub organization_id: Option<Uuid>,
    /// Role ids or names (at most 50); the caller must hold everything they grant.
    #[serde(default)]
    #[validate(length(max = 50), custom(function = "role_tokens"))]
    pub roles: Option<Vec<String>>,
    /// ISO 8601 date-time (or date) in the future; empty or null = never expires.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<String>,
}

/// The created key, with its secret (shown this once).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedApiKey {
    pub id: Uuid,
    pub name: String,
    pub key_prefix: String,
    /// The full secret; it cannot be retrieved again.
    #[schema(example = "omk_1a2b3c4d.0123456789abcdef0123456789abcdef0123456789abcdef")]
    pub secret: String,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub roles: Vec<ApiKeyRole>,
}

/// `DELETE /api_keys/keys` query.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ApiKeyIdQuery {
    /// The key's id.
    #[param(value_type = Uuid)]
    pub id: Option<String>,
}

/// `{success: true}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyDeleted {
    pub success: bool,
}
