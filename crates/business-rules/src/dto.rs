//! Request and response bodies.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use crate::engine::ActionsExecuted;

/// The five rule types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RuleType {
    Guard,
    Validation,
    Calculation,
    Action,
    Assignment,
}

impl RuleType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Guard => "GUARD",
            Self::Validation => "VALIDATION",
            Self::Calculation => "CALCULATION",
            Self::Action => "ACTION",
            Self::Assignment => "ASSIGNMENT",
        }
    }
}

/// `POST /business_rules/rules`.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateRule {
    #[validate(length(min = 1, max = 50))]
    pub rule_id: String,
    #[validate(length(min = 1, max = 200))]
    pub rule_name: String,
    pub rule_type: RuleType,
    #[validate(length(min = 1, max = 50))]
    pub entity_type: String,
    #[validate(length(max = 5000))]
    pub description: Option<String>,
    #[validate(length(max = 50))]
    pub rule_category: Option<String>,
    #[validate(length(max = 50))]
    pub event_type: Option<String>,
    pub enabled: Option<bool>,
    #[validate(range(min = 0, max = 9999))]
    pub priority: Option<i32>,
    #[validate(range(min = 1))]
    pub version: Option<i32>,
    /// A date or date-time; empty or unparsable: none.
    pub effective_from: Option<String>,
    pub effective_to: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub condition_expression: Option<Value>,
    #[schema(value_type = Option<Vec<Object>>)]
    pub success_actions: Option<Value>,
    #[schema(value_type = Option<Vec<Object>>)]
    pub failure_actions: Option<Value>,
}

/// `PUT /business_rules/rules {id, ...}`: omitted fields keep their values;
/// `null` clears an optional one.
#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRule {
    #[validate(length(min = 1, max = 50))]
    pub rule_id: Option<String>,
    #[validate(length(min = 1, max = 200))]
    pub rule_name: Option<String>,
    pub rule_type: Option<RuleType>,
    #[validate(length(min = 1, max = 50))]
    pub entity_type: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub description: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub rule_category: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub event_type: Option<Option<String>>,
    pub enabled: Option<bool>,
    #[validate(range(min = 0, max = 9999))]
    pub priority: Option<i32>,
    #[validate(range(min = 1))]
    pub version: Option<i32>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub effective_from: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub effective_to: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Object>)]
    pub condition_expression: Option<Option<Value>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub success_actions: Option<Option<Value>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub failure_actions: Option<Option<Value>>,
}

/// A key that is present (even as `null`) becomes `Some(..)`.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// `{id}` of a created record.
#[derive(Debug, Serialize, ToSchema)]
pub struct Created {
    pub id: Uuid,
}

/// `{id}` of a created rule, with its webhook secret when its actions call
/// webhooks (`whsec_...`, shown this once: no read shows it again).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedRule {
    pub id: Uuid,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<String>,
}

/// `{ok: true}` of a rule update, with the rule's new webhook secret when
/// the update gave a rule without one its first `CALL_WEBHOOK` action
/// (shown this once).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleUpdated {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<String>,
}

/// A rule's new webhook secret (`whsec_` + base64 of 32 random bytes),
/// shown this once. Receivers verify the `webhook-signature` header with it
/// (the Standard Webhooks scheme).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSecret {
    pub webhook_secret: String,
}

/// `{ok: true}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Done {
    pub ok: bool,
}

/// `?id=` of the collection deletes.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IdQuery {
    pub id: Option<String>,
}

/// `?memberId=`.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct MemberIdQuery {
    pub member_id: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SortDir {
    Asc,
    #[default]
    Desc,
}

#[derive(Clone, Copy, Debug, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum RuleSort {
    RuleId,
    RuleName,
    RuleType,
    EntityType,
    Priority,
    CreatedAt,
    UpdatedAt,
}

/// `GET /business_rules/rules`.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RuleListQuery {
    pub id: Option<Uuid>,
    #[validate(range(min = 1, max = 100000))]
    pub page: Option<i64>,
    #[validate(range(min = 1, max = 100))]
    pub page_size: Option<i64>,
    /// Part of the rule name (case-insensitive).
    #[validate(length(max = 200))]
    pub search: Option<String>,
    /// Part of the rule id (case-insensitive).
    #[validate(length(max = 50))]
    pub rule_id: Option<String>,
    pub rule_type: Option<RuleType>,
    #[validate(length(max = 50))]
    pub entity_type: Option<String>,
    #[validate(length(max = 50))]
    pub event_type: Option<String>,
    // Unlike the reference, `false` lists the disabled rules.
    /// `true` lists the enabled rules, `false` the disabled ones.
    pub enabled: Option<bool>,
    #[validate(length(max = 50))]
    pub rule_category: Option<String>,
    /// Default `priority`.
    #[param(value_type = Option<String>)]
    pub sort_field: Option<RuleSort>,
    /// Default `desc`.
    #[param(value_type = Option<String>)]
    pub sort_dir: Option<SortDir>,
}

/// A rule in lists.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleItem {
    pub id: Uuid,
    pub rule_id: String,
    pub rule_name: String,
    pub description: Option<String>,
    pub rule_type: String,
    pub rule_category: Option<String>,
    pub entity_type: String,
    pub event_type: Option<String>,
    pub enabled: bool,
    pub priority: i32,
    pub version: i32,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    pub effective_from: Option<OffsetDateTime>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    pub effective_to: Option<OffsetDateTime>,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub updated_at: OffsetDateTime,
}

/// One rule in full.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleDetail {
    #[serde(flatten)]
    pub item: RuleItem,
    #[schema(value_type = Option<Object>)]
    pub condition_expression: Option<Value>,
    #[schema(value_type = Option<Vec<Object>>)]
    pub success_actions: Option<Value>,
    #[schema(value_type = Option<Vec<Object>>)]
    pub failure_actions: Option<Value>,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleList {
    pub items: Vec<RuleItem>,
    pub total: i64,
    pub page: i64,
    pub page_size: i64,
    pub total_pages: i64,
}

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
    pub page: Option<i64>,
    #[validate(range(min = 1, max = 100))]
    pub page_size: Option<i64>,
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
    pub items: Vec<SetItem>,
    pub total: i64,
    pub page: i64,
    pub page_size: i64,
    pub total_pages: i64,
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
    pub page: Option<i64>,
    #[validate(range(min = 1, max = 100))]
    pub page_size: Option<i64>,
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
    pub items: Vec<LogItem>,
    pub total: i64,
    pub page: i64,
    pub page_size: i64,
    pub total_pages: i64,
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
