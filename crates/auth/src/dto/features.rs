//! Feature check and catalog bodies.

use serde::{Deserialize, Serialize};
use stoa_acl::{Feature, ModuleInfo};
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Deserialize, ToSchema)]
pub struct FeatureCheckRequest {
    /// At most 50 feature ids, each at most 128 characters.
    pub features: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureCheckResponse {
    /// True when every requested feature is granted.
    pub ok: bool,
    /// The requested features the caller holds.
    pub granted: Vec<String>,
    pub user_id: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureCatalog {
    pub items: Vec<Feature>,
    pub modules: Vec<ModuleInfo>,
}
