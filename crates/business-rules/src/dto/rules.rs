//! Rules: create and update bodies, the list query, items and detail.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use super::ListPage;
use super::{SortDir, present};

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
    pub page: Option<u64>,
    #[validate(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
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
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<RuleItem>,
}
