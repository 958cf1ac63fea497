//! Rule sets and their members.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use super::ListPage;
use super::{SortDir, present};

/// `POST /business_rules/sets`.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateSet {
    #[validate(length(min = 1, max = 50))]
    pub set_id: String,
    #[validate(length(min = 1, max = 200))]
    pub set_name: String,
    #[validate(length(max = 5000))]
    pub description: Option<String>,
    pub enabled: Option<bool>,
}

/// `PUT /business_rules/sets {id, ...}`: omitted fields keep their values.
#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateSet {
    #[validate(length(min = 1, max = 50))]
    pub set_id: Option<String>,
    #[validate(length(min = 1, max = 200))]
    pub set_name: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub description: Option<Option<String>>,
    pub enabled: Option<bool>,
}

#[derive(Clone, Copy, Debug, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum SetSort {
    SetId,
    SetName,
    Enabled,
    CreatedAt,
    UpdatedAt,
}

/// `GET /business_rules/sets`.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct SetListQuery {
    pub id: Option<Uuid>,
    #[validate(range(min = 1, max = 100000))]
    pub page: Option<u64>,
    #[validate(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
    #[validate(length(max = 200))]
    pub search: Option<String>,
    #[validate(length(max = 50))]
    pub set_id: Option<String>,
    pub enabled: Option<bool>,
    /// Default `setId`.
    #[param(value_type = Option<String>)]
    pub sort_field: Option<SetSort>,
    /// Default `asc`.
    #[param(value_type = Option<String>)]
    pub sort_dir: Option<SortDir>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetItem {
    pub id: Uuid,
    pub set_id: String,
    pub set_name: String,
    pub description: Option<String>,
    pub enabled: bool,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub updated_at: OffsetDateTime,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<SetItem>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberItem {
    pub id: Uuid,
    /// The rule's uuid.
    pub rule_id: Uuid,
    pub rule_name: String,
    pub rule_type: String,
    pub sequence: i32,
    pub enabled: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetDetail {
    #[serde(flatten)]
    pub set: SetItem,
    pub members: Vec<MemberItem>,
}

/// `POST /business_rules/sets/{id}/members`.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddMember {
    pub rule_id: Uuid,
    #[validate(range(min = 0, max = 1000000))]
    pub sequence: Option<i32>,
    pub enabled: Option<bool>,
}

/// `PUT /business_rules/sets/{id}/members`.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateMember {
    pub member_id: Uuid,
    #[validate(range(min = 0, max = 1000000))]
    pub sequence: Option<i32>,
    pub enabled: Option<bool>,
}
