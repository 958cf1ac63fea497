//! Rows of the module's tables; a rule's, a set's and a member's whole row
//! is also the state undo writes back (a deleted rule or set keeps its row
//! with `deletedAt`).

use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::{
    business_rule_logs, business_rule_set_members, business_rule_sets, business_rules,
};

/// A rule's whole state.
#[derive(
    Clone, Debug, PartialEq, Serialize, Deserialize, Queryable, Selectable, Insertable, AsChangeset,
)]
#[diesel(table_name = business_rules, treat_none_as_null = true)]
#[serde(rename_all = "camelCase")]
pub struct RuleState {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub rule_id: String,
    pub rule_name: String,
    pub description: Option<String>,
    pub rule_type: String,
    pub rule_category: Option<String>,
    pub entity_type: String,
    pub event_type: Option<String>,
    pub condition_expression: Option<Value>,
    pub success_actions: Option<Value>,
    pub failure_actions: Option<Value>,
    pub enabled: bool,
    pub priority: i32,
    pub version: i32,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    pub effective_from: Option<OffsetDateTime>,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    pub effective_to: Option<OffsetDateTime>,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    pub deleted_at: Option<OffsetDateTime>,
}

/// A rule row with its last change time (what reads show).
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = business_rules)]
pub struct RuleRow {
    #[diesel(embed)]
    pub state: RuleState,
    pub updated_at: OffsetDateTime,
}

/// A rule set's whole state.
#[derive(
    Clone, Debug, PartialEq, Serialize, Deserialize, Queryable, Selectable, Insertable, AsChangeset,
)]
#[diesel(table_name = business_rule_sets, treat_none_as_null = true)]
#[serde(rename_all = "camelCase")]
pub struct SetState {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub set_id: String,
    pub set_name: String,
    pub description: Option<String>,
    pub enabled: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp::option")]
    pub deleted_at: Option<OffsetDateTime>,
}

#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = business_rule_sets)]
pub struct SetRow {
    #[diesel(embed)]
    pub state: SetState,
    pub updated_at: OffsetDateTime,
}

/// A set member's whole state (members are deleted for good).
#[derive(
    Clone, Debug, PartialEq, Serialize, Deserialize, Queryable, Selectable, Insertable, AsChangeset,
)]
#[diesel(table_name = business_rule_set_members)]
#[serde(rename_all = "camelCase")]
pub struct MemberState {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub rule_set_id: Uuid,
    pub rule_id: Uuid,
    pub sequence: i32,
    pub enabled: bool,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub created_at: OffsetDateTime,
}

/// One execution-log row.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = business_rule_logs)]
pub struct LogRow {
    pub id: i64,
    pub rule_id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub entity_id: String,
    pub entity_type: String,
    pub execution_result: String,
    pub input_context: Option<Value>,
    pub output_context: Option<Value>,
    pub error_message: Option<String>,
    pub execution_time_ms: i32,
    pub executed_by: Option<String>,
    pub executed_at: OffsetDateTime,
}

/// A new execution-log row.
#[derive(Clone, Debug, Insertable)]
#[diesel(table_name = business_rule_logs)]
pub struct NewLog {
    pub rule_id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub entity_id: String,
    pub entity_type: String,
    pub execution_result: String,
    pub input_context: Option<Value>,
    pub output_context: Option<Value>,
    pub error_message: Option<String>,
    pub execution_time_ms: i32,
    pub executed_by: Option<String>,
}
