//! Shapes of the tenant endpoints (`/directory/tenants`).

use serde::{Deserialize, Serialize};
use stoa_core::list::ListPage;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use crate::model::TenantRow;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantItem {
    pub id: Uuid,
    pub name: String,
    pub is_active: bool,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<TenantRow> for TenantItem {
    fn from(r: TenantRow) -> Self {
        Self {
            id: r.id,
            name: r.name,
            is_active: r.is_active,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum TenantSortField {
    #[default]
    Name,
    CreatedAt,
    UpdatedAt,
}

/// `asc` (the tenant list's default) or `desc`.
pub use stoa_core::list::SortDir;

#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct TenantListQuery {
    pub id: Option<Uuid>,
    pub page: Option<u64>,
    pub page_size: Option<u64>,
    #[validate(length(max = 200))]
    pub search: Option<String>,
    #[param(inline)]
    pub sort_field: Option<TenantSortField>,
    #[param(inline)]
    pub sort_dir: Option<SortDir>,
    pub is_active: Option<bool>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<TenantItem>,
}

/// The sort key of a tenant-list cursor: the sorted value (the name, or a
/// timestamp in unix microseconds) and the id.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TenantKey {
    Name(String, Uuid),
    At(i64, Uuid),
}

impl TenantSortField {
    /// The cursor tag of the tenant list in this order (a cursor of one
    /// order is 400 in another).
    pub fn cursor_tag(self, dir: SortDir) -> &'static str {
        match (self, dir) {
            (Self::Name, SortDir::Asc) => "directory.tenants:name:asc",
            (Self::Name, SortDir::Desc) => "directory.tenants:name:desc",
            (Self::CreatedAt, SortDir::Asc) => "directory.tenants:createdAt:asc",
            (Self::CreatedAt, SortDir::Desc) => "directory.tenants:createdAt:desc",
            (Self::UpdatedAt, SortDir::Asc) => "directory.tenants:updatedAt:asc",
            (Self::UpdatedAt, SortDir::Desc) => "directory.tenants:updatedAt:desc",
        }
    }
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateTenant {
    #[validate(length(min = 1, max = 200))]
    pub name: String,
    pub is_active: Option<bool>,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTenant {
    pub id: Uuid,
    #[validate(length(min = 1, max = 200))]
    pub name: Option<String>,
    pub is_active: Option<bool>,
}
