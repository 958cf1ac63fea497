//! `GET /business_rules/platform-call-options`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// One operation a `CALL_OPEN_MERCATO` action may call.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallEndpoint {
    pub id: String,
    pub path: String,
    pub method: String,
    pub label: String,
    pub summary: Option<String>,
    pub operation_id: Option<String>,
    pub required_features: Vec<String>,
}

/// A role of an API key.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallKeyRole {
    pub id: Uuid,
    pub name: Option<String>,
}

/// An API key a `CALL_OPEN_MERCATO` action may run as (never its secret).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallApiKey {
    pub id: Uuid,
    pub name: String,
    pub key_prefix: String,
    pub organization_id: Option<Uuid>,
    pub organization_name: Option<String>,
    pub roles: Vec<CallKeyRole>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallOptions {
    pub endpoints: Vec<CallEndpoint>,
    /// Live keys of the caller's tenant (and organizations), by name.
    pub api_keys: Vec<CallApiKey>,
}
