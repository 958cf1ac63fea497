//! Shapes of the public lookups (`/directory/tenants/lookup`,
//! `/directory/organizations/lookup`).

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct TenantLookupQuery {
    pub tenant_id: Option<String>,
    /// Alias of `tenantId`.
    pub tenant: Option<String>,
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OrganizationLookupQuery {
    pub slug: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TenantRef {
    pub id: Uuid,
    pub name: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TenantLookup {
    pub ok: bool,
    pub tenant: TenantRef,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrganizationRef {
    pub id: Uuid,
    pub name: String,
    pub slug: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrganizationLookup {
    pub ok: bool,
    pub organization: OrganizationRef,
}
