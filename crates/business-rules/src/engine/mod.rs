//! The engine: discovery (entity type, event type, organization, enabled,
//! effective window, priority order, the 100-rule cap), evaluation of each
//! rule in isolation, the actions' results, and what a run leaves behind
//! (execution logs, webhook jobs, events, mail), written in one transaction
//! after the rules ran — or not at all on a dry run.

//!
//! Split by idea: the rules and a run's types here, running them
//! ([`run`](self::run()), `run.rs`), each action's effect (`action.rs`), and
//! what a run leaves behind (`log.rs`: the execution log, [`commit`]).

mod action;
mod log;
mod run;

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::actions::{self, Action};
use crate::condition::{self, Condition, Schema};
use crate::model::RuleState;

pub use action::PENDING_WRITE;
pub use log::{commit, redact};
pub use run::{not_run, run};

/// Most rules one run executes; more applicable rules refuse the run.
pub const MAX_RULES: usize = 100;
/// The job kind of a webhook call.
pub const WEBHOOK_JOB: &str = "business_rules.webhook";
/// The event emitted when a rule fails in an execute-by-context run.
pub const FAILED_EVENT: &str = "business_rules.rule.execution_failed";
/// The command id events emitted by rules carry (the trigger skips them, so
/// a rule's own effect never re-triggers rules).
pub const EMIT_COMMAND: &str = "business_rules.emit";
/// The origin of every event a rule run writes (`stoa_core::command::outbox::Origin`).
pub const RULES_ORIGIN: &str = "business_rules";

/// A rule as the engine runs it: its stored JSON parsed once.
#[derive(Debug)]
pub struct CompiledRule {
    pub id: Uuid,
    pub organization_id: Uuid,
    pub rule_id: String,
    pub rule_name: String,
    pub rule_type: String,
    pub entity_type: String,
    pub event_type: Option<String>,
    pub enabled: bool,
    pub priority: i32,
    pub effective_from: Option<OffsetDateTime>,
    pub effective_to: Option<OffsetDateTime>,
    pub condition: Result<Option<Condition>, String>,
    pub success: Vec<Action>,
    pub failure: Vec<Action>,
    /// Who last saved it (a user or an API key; `None` for seeded rules):
    /// the rule acts for them, as they stand when it runs (`authors`).
    pub author: Option<Uuid>,
    /// `{ruleId, ruleName}`: what the actions' `{{ruleId}}` and
    /// `{{ruleName}}` read (built once, not per run).
    names: Value,
}

impl CompiledRule {
    /// Compiles a stored rule (checked when saved; a rule that no longer
    /// parses runs as an error, never as "true").
    pub fn compile(state: &RuleState) -> Self {
        let any = Schema { fields: None };
        let condition = match &state.condition_expression {
            None | Some(Value::Null) => Ok(None),
            Some(v) => condition::parse(v, &any)
                .map(Some)
                .map_err(|_| "the stored condition is invalid".to_string()),
        };
        let success = actions::parse(
            state.success_actions.as_ref(),
            "successActions",
            &actions::STORED,
        );
        let failure = actions::parse(
            state.failure_actions.as_ref(),
            "failureActions",
            &actions::STORED,
        );
        let (condition, success, failure) = match (condition, success, failure) {
            (c, Ok(s), Ok(f)) => (c, s, f),
            _ => (
                Err("the stored actions are invalid".to_string()),
                Vec::new(),
                Vec::new(),
            ),
        };
        Self {
            id: state.id,
            organization_id: state.organization_id,
            rule_id: state.rule_id.clone(),
            rule_name: state.rule_name.clone(),
            rule_type: state.rule_type.clone(),
            entity_type: state.entity_type.clone(),
            event_type: state.event_type.clone(),
            enabled: state.enabled,
            priority: state.priority,
            effective_from: state.effective_from,
            effective_to: state.effective_to,
            condition,
            success,
            failure,
            author: state.updated_by,
            names: json!({"ruleId": state.rule_id, "ruleName": state.rule_name}),
        }
    }

    pub fn is_guard(&self) -> bool {
        self.rule_type == "GUARD"
    }

    /// Why the rule cannot run now (`None`: it can).
    pub fn unavailable(&self, now: OffsetDateTime) -> Option<String> {
        if !self.enabled {
            return Some("Rule is disabled".into());
        }
        let iso = stoa_core::serde_util::timestamp::format;
        if let Some(from) = self.effective_from
            && from > now
        {
            return Some(format!("Rule is not yet effective (starts {})", iso(from)));
        }
        if let Some(to) = self.effective_to
            && to < now
        {
            return Some(format!("Rule has expired (ended {})", iso(to)));
        }
        None
    }
}

/// The applicable rules among a tenant's `rules` (all enabled): entity
/// type, organization, event type (with one: rules of that event type only;
/// without: every rule), rule type, effective window; highest priority
/// first, then by rule id.
pub fn discover(
    rules: &[Arc<CompiledRule>],
    organization: Uuid,
    entity_type: &str,
    event_type: Option<&str>,
    guards_only: bool,
    now: OffsetDateTime,
) -> Vec<Arc<CompiledRule>> {
    let mut found: Vec<Arc<CompiledRule>> = rules
        .iter()
        .filter(|r| {
            r.organization_id == organization
                && r.entity_type == entity_type
                && (!guards_only || r.is_guard())
                && event_type.is_none_or(|e| r.event_type.as_deref() == Some(e))
                && r.unavailable(now).is_none()
        })
        .cloned()
        .collect();
    found.sort_by(|a, b| {
        b.priority
            .cmp(&a.priority)
            .then_with(|| a.rule_id.cmp(&b.rule_id))
    });
    found
}

/// Who runs the rules and on what.
#[derive(Clone, Debug)]
pub struct Request {
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub entity_type: String,
    pub entity_id: Option<String>,
    pub event_type: Option<String>,
    pub data: Value,
    /// `{id, email, role}` of the caller (nulls for system triggers).
    pub user: Value,
    pub executed_by: Option<String>,
    pub dry_run: bool,
    /// Whether `SET_FIELD` writes and `CALL_OPEN_MERCATO` calls (the event
    /// trigger, after the run: see [`crate::writes`], [`crate::platform`]);
    /// the execute endpoints only describe them.
    pub writes_fields: bool,
}

impl Request {
    /// The evaluation context `{{...}}` placeholders read.
    pub fn context(&self) -> Value {
        json!({
            "entityType": self.entity_type,
            "entityId": self.entity_id,
            "eventType": self.event_type,
            "user": self.user,
            "tenant": self.tenant_id,
            "organization": self.organization_id,
        })
    }
}

/// One action's outcome.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionResult {
    #[serde(rename = "type")]
    pub kind: String,
    pub success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[schema(value_type = Object)]
    pub result: Value,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionsExecuted {
    pub success: bool,
    pub results: Vec<ActionResult>,
}

/// One rule's outcome in a run.
#[derive(Clone, Debug)]
pub struct RuleOutcome {
    pub rule: Arc<CompiledRule>,
    pub condition_result: bool,
    pub actions: Option<ActionsExecuted>,
    pub execution_time_ms: f64,
    pub error: Option<String>,
    pub log_id: Option<i64>,
}

/// What a run leaves behind once it commits.
#[derive(Clone, Debug)]
pub enum Effect {
    Webhook(Value),
    Emit { name: String, payload: Value },
    Mail(stoa_mail::Mail),
}

/// A whole run.
#[derive(Debug, Default)]
pub struct Run {
    pub allowed: bool,
    pub outcomes: Vec<RuleOutcome>,
    pub errors: Vec<String>,
    pub effects: Vec<Effect>,
    pub total_ms: f64,
}
