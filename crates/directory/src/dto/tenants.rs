//! Shapes of the tenant endpoints (`/directory/tenants`).

use serde::{Deserialize, Serialize};
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
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
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

#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SortDir {
    #[default]
    Asc,
    Desc,
}

#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct TenantListQuery {
    pub id: Option<Uuid>,
    pub page: Option<u64>,
    pub page_size: Option<u64>,
    #[validate(length(max = 200))]
    pub search: Option<String>,
    pub sort_field: Option<TenantSortField>,
    pub sort_dir: Option<SortDir>,
    pub is_active: Option<bool>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantList {
    pub items: Vec<TenantItem>,
    pub total: u64,
    pub page: u64,
    pub page_size: u64,
    pub total_pages: u64,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateTenant {
    #[validate(length(min = 1, max = 200))]
    pub name: String,
    pub is_active: Option<bool>,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateTenant {
    pub id: Uuid,
    #[validate(length(min = 1, max = 200))]
    pub name: Option<String>,
    pub is_active: Option<bool>,
}
