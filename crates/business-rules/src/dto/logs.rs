//! The execution log: the list query, items and detail.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use super::ListPage;
use super::SortDir;

#[derive(Clone, Copy, Debug, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum LogSort {
    Id,
    RuleId,
    EntityType,
    ExecutionResult,
    ExecutionTimeMs,
    ExecutedAt,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExecutionResult {
    Success,
    Failure,
    Error,
}

/// `GET /business_rules/logs`.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct LogListQuery {
    pub id: Option<i64>,
    #[validate(range(min = 1, max = 100000))]
    pub page: Option<u64>,
    #[validate(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
    /// The rule's uuid.
    pub rule_id: Option<Uuid>,
    #[validate(length(max = 255))]
    pub entity_id: Option<String>,
    #[validate(length(max = 50))]
    pub entity_type: Option<String>,
    #[param(value_type = Option<String>)]
    pub execution_result: Option<ExecutionResult>,
    #[validate(length(max = 50))]
    pub executed_by: Option<String>,
    /// Inclusive; a date or date-time.
    pub executed_at_from: Option<String>,
    pub executed_at_to: Option<String>,
    /// Default `executedAt`.
    #[param(value_type = Option<String>)]
    pub sort_field: Option<LogSort>,
    /// Default `desc`.
    #[param(value_type = Option<String>)]
    pub sort_dir: Option<SortDir>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogFields {
    pub id: String,
    pub entity_id: String,
    pub entity_type: String,
    pub execution_result: String,
    #[schema(value_type = Option<Object>)]
    pub input_context: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub output_context: Option<Value>,
    pub error_message: Option<String>,
    pub execution_time_ms: i32,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub executed_at: OffsetDateTime,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub executed_by: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogItem {
    #[serde(flatten)]
    pub fields: LogFields,
    /// The rule's uuid.
    pub rule_id: Uuid,
    pub rule_name: String,
    pub rule_type: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<LogItem>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogRule {
    pub id: Uuid,
    pub rule_id: String,
    pub rule_name: String,
    pub rule_type: String,
    pub entity_type: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogDetail {
    #[serde(flatten)]
    pub fields: LogFields,
    pub rule: LogRule,
}
