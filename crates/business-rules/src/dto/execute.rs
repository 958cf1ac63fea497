//! `POST /business_rules/execute` and `/execute/{ruleId}`: bodies and results.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use validator::Validate;

use crate::engine::ActionsExecuted;

/// `POST /business_rules/execute`.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteBody {
    #[validate(length(min = 1, max = 50))]
    pub entity_type: String,
    #[validate(length(max = 255))]
    pub entity_id: Option<String>,
    #[validate(length(max = 50))]
    pub event_type: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub data: Option<Value>,
    pub dry_run: Option<bool>,
}

/// `POST /business_rules/execute/{ruleId}`.
#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteOneBody {
    #[schema(value_type = Option<Object>)]
    pub data: Option<Value>,
    pub dry_run: Option<bool>,
    #[validate(length(min = 1, max = 50))]
    pub entity_type: Option<String>,
    #[validate(length(max = 255))]
    pub entity_id: Option<String>,
    #[validate(length(max = 50))]
    pub event_type: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutedRule {
    pub rule_id: String,
    pub rule_name: String,
    pub rule_type: String,
    pub condition_result: bool,
    pub actions_executed: Option<ActionsExecuted>,
    pub execution_time: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteResult {
    pub allowed: bool,
    pub executed_rules: Vec<ExecutedRule>,
    pub total_execution_time: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_ids: Option<Vec<String>>,
    pub dry_run: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteOneResult {
    pub success: bool,
    pub rule_id: String,
    pub rule_name: String,
    pub condition_result: bool,
    pub actions_executed: Option<ActionsExecuted>,
    pub execution_time: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_id: Option<String>,
}
