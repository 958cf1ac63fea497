//! The engine: discovery (entity type, event type, organization, enabled,
//! effective window, priority order, the 100-rule cap), evaluation of each
//! rule in isolation, the actions' results, and what a run leaves behind
//! (execution logs, webhook jobs, events, mail), written in one transaction
//! after the rules ran — or not at all on a dry run.

use std::sync::Arc;
use std::time::Instant;

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use serde_json::{Map, Value, json};
use stoa_core::AppError;
use stoa_core::command::Event;
use stoa_core::command::outbox::{self, Envelope, EventActor, Origin};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::actions::{self, Action, ActionType};
use crate::condition::{self, Condition, Lookup, Schema, Scope, interpolate, resolve_text};
use crate::model::{NewLog, RuleState};
use crate::schema::business_rule_logs;

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

/// Runs `rules` (already discovered) for `req`, in order, each isolated.
pub fn run(rules: &[Arc<CompiledRule>], req: &Request, now: OffsetDateTime) -> Run {
    let started = Instant::now();
    if rules.len() > MAX_RULES {
        return Run {
            allowed: false,
            errors: vec![format!(
                "Rule count limit exceeded: {} applicable rules, at most {MAX_RULES} run",
                rules.len()
            )],
            total_ms: ms(started),
            ..Run::default()
        };
    }
    let context = req.context();
    let base = action_base(req, &context);
    let stamp = stoa_core::serde_util::timestamp::format(now);
    let mut run = Run {
        outcomes: Vec::with_capacity(rules.len()),
        ..Run::default()
    };
    for rule in rules {
        let outcome = run_rule(rule, req, &context, (&base, &stamp), now, &mut run.effects);
        run.outcomes.push(outcome);
    }
    run.allowed = run
        .outcomes
        .iter()
        .filter(|o| o.rule.is_guard())
        .all(|o| o.condition_result && o.error.is_none());
    run.total_ms = ms(started);
    run
}

/// The outcome of a rule that did not run (its author can no longer have
/// it act: `crate::authors`): no condition, no actions, the reason as error.
pub fn not_run(rule: Arc<CompiledRule>, reason: String) -> RuleOutcome {
    RuleOutcome {
        rule,
        condition_result: false,
        actions: None,
        execution_time_ms: 0.0,
        error: Some(reason),
        log_id: None,
    }
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// Runs one rule: its condition, then its success or failure actions
/// (`(base, stamp)`: the run's [`action_base`] and its time as RFC 3339).
fn run_rule(
    rule: &Arc<CompiledRule>,
    req: &Request,
    context: &Value,
    (base, stamp): (&Value, &str),
    now: OffsetDateTime,
    effects: &mut Vec<Effect>,
) -> RuleOutcome {
    let started = Instant::now();
    let scope = Scope {
        data: &req.data,
        context,
        now,
    };
    let result = match &rule.condition {
        Err(e) => Err(e.clone()),
        Ok(None) => Ok(true),
        Ok(Some(c)) => Ok(c.eval(&scope)),
    };
    let (condition_result, error) = match result {
        Ok(r) => (r, None),
        Err(e) => (false, Some(e)),
    };
    let actions = if error.is_some() {
        None
    } else {
        let list = if condition_result {
            &rule.success
        } else {
            &rule.failure
        };
        (!list.is_empty()).then(|| {
            let scope = ActionScope {
                base,
                names: &rule.names,
                stamp,
            };
            let results: Vec<ActionResult> = list
                .iter()
                .map(|a| run_action(a, rule, req, &scope, now, effects))
                .collect();
            ActionsExecuted {
                success: results.iter().all(|r| r.success),
                results,
            }
        })
    };
    RuleOutcome {
        rule: rule.clone(),
        condition_result,
        actions,
        execution_time_ms: ms(started),
        error,
        log_id: None,
    }
}

/// What every rule's actions read, built once per run: the evaluation
/// context, `data`, `tenantId`, `organizationId`, `executedBy` (each rule
/// adds its `ruleId` and `ruleName`, [`ActionScope`]).
fn action_base(req: &Request, context: &Value) -> Value {
    let mut map = match context {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    map.insert("data".into(), req.data.clone());
    map.insert("tenantId".into(), json!(req.tenant_id));
    map.insert("organizationId".into(), json!(req.organization_id));
    map.insert("executedBy".into(), json!(req.executed_by));
    Value::Object(map)
}

/// Where one rule's action placeholders are looked up: the rule's
/// `ruleId` and `ruleName`, then the run's [`action_base`] (no copy of the
/// run's data per rule).
struct ActionScope<'a> {
    base: &'a Value,
    names: &'a Value,
    /// The run's time (RFC 3339), for `LOG` results.
    stamp: &'a str,
}

impl Lookup for ActionScope<'_> {
    fn lookup(&self, path: &str) -> Option<&Value> {
        let path = path.trim();
        let root = path.split(['.', '[']).next().unwrap_or(path);
        if root == "ruleId" || root == "ruleName" {
            resolve_text(path, self.names)
        } else {
            resolve_text(path, self.base)
        }
    }
}

fn interpolate_value<L: Lookup + ?Sized>(v: &Value, data: &L, now: OffsetDateTime) -> Value {
    match v {
        Value::String(s) => Value::String(interpolate(s, data, now)),
        Value::Array(list) => list
            .iter()
            .map(|x| interpolate_value(x, data, now))
            .collect(),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, x)| (k.clone(), interpolate_value(x, data, now)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The status of a `SET_FIELD` result the trigger has yet to write.
pub const PENDING_WRITE: &str = "pending";

/// A `SET_FIELD` value: a string that is one placeholder (`"{{data.x}}"`)
/// takes the placeholder's value with its type (a number stays a number);
/// anything else is interpolated as text.
fn resolve_value<L: Lookup + ?Sized>(v: &Value, data: &L, now: OffsetDateTime) -> Value {
    if let Value::String(s) = v {
        let t = s.trim();
        if let Some(name) = t.strip_prefix("{{").and_then(|r| r.strip_suffix("}}"))
            && !name.contains("{{")
            && !name.contains("}}")
            && let Some(found) = condition::template(name.trim(), data, now)
            && !found.is_null()
        {
            return found;
        }
    }
    interpolate_value(v, data, now)
}

fn run_action(
    action: &Action,
    rule: &CompiledRule,
    req: &Request,
    data: &ActionScope<'_>,
    now: OffsetDateTime,
    effects: &mut Vec<Effect>,
) -> ActionResult {
    let text =
        |key: &str, default: &str| interpolate(action.text(key).unwrap_or(default), data, now);
    let kind = action.kind.name().to_string();
    let ok = |result: Value| ActionResult {
        kind: kind.clone(),
        success: true,
        error: None,
        result,
    };
    match action.kind {
        ActionType::AllowTransition => {
            ok(json!({"allowed": true, "message": text("message", "Transition allowed")}))
        }
        ActionType::BlockTransition => {
            ok(json!({"allowed": false, "message": text("message", "Transition blocked")}))
        }
        ActionType::Log => ok(json!({
            "level": action.text("level").unwrap_or("info"),
            "message": text("message", ""),
            "timestamp": data.stamp,
        })),
        ActionType::ShowError | ActionType::ShowWarning | ActionType::ShowInfo => {
            let severity = match action.kind {
                ActionType::ShowError => "error",
                ActionType::ShowWarning => "warning",
                _ => "info",
            };
            ok(json!({"severity": severity, "message": text("message", "")}))
        }
        ActionType::Notify => {
            let recipients: Vec<String> = action
                .config
                .get("recipients")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(|x| x.as_str())
                        .map(|s| interpolate(s, data, now))
                        .collect()
                })
                .unwrap_or_default();
            let subject = text("subject", &format!("Business rule: {}", rule.rule_name));
            let message = text("message", "");
            if !req.dry_run {
                for to in &recipients {
                    effects.push(Effect::Mail(stoa_mail::Mail::text(
                        to.clone(),
                        subject.clone(),
                        message.clone(),
                    )));
                }
            }
            ok(json!({
                "recipients": recipients,
                "subject": subject,
                "message": message,
                "template": action.text("template"),
                "status": if req.dry_run { "skipped (dry run)" } else { "queued" },
            }))
        }
        ActionType::CallWebhook => {
            let url = text("url", "");
            let method = action.text("method").unwrap_or("POST").to_string();
            let headers = action
                .config
                .get("headers")
                .map(|h| interpolate_value(h, data, now))
                .unwrap_or(Value::Null);
            let body = action
                .config
                .get("body")
                .map(|b| interpolate_value(b, data, now))
                .unwrap_or(Value::Null);
            let call = json!({
                "url": url,
                "method": method,
                "headers": headers,
                "body": body,
                "ruleId": rule.rule_id,
                // The webhook job signs with this rule's secret, read then.
                "rule": rule.id,
                "tenantId": req.tenant_id,
            });
            if !req.dry_run {
                effects.push(Effect::Webhook(call));
            }
            ok(json!({
                "url": url,
                "method": method,
                "status": if req.dry_run { "skipped (dry run)" } else { "queued" },
            }))
        }
        ActionType::EmitEvent => {
            let name = text("eventName", "");
            let payload = action
                .config
                .get("payload")
                .map(|p| interpolate_value(p, data, now))
                .unwrap_or(Value::Null);
            if !req.dry_run {
                effects.push(Effect::Emit {
                    name: name.clone(),
                    payload: payload.clone(),
                });
            }
            ok(json!({
                "event": name,
                "payload": payload,
                "status": if req.dry_run { "skipped (dry run)" } else { "emitted" },
            }))
        }
        ActionType::SetField => {
            let field = action.text("field").unwrap_or_default();
            let value = action
                .config
                .get("value")
                .map(|v| resolve_value(v, data, now))
                .unwrap_or(Value::Null);
            let status = if req.dry_run {
                "skipped (dry run)"
            } else if req.writes_fields {
                PENDING_WRITE
            } else {
                "not written (only rules triggered by events write)"
            };
            ok(json!({"field": field, "value": value, "status": status}))
        }
        ActionType::CallPlatform => {
            let method = action.text("method").unwrap_or("POST").to_string();
            let body = match action.config.get("body") {
                None | Some(Value::Null) => Value::Null,
                // A string body is interpolated, then read as JSON when it is.
                Some(Value::String(b)) => {
                    let text = interpolate(b, data, now);
                    serde_json::from_str(&text).unwrap_or(Value::String(text))
                }
                Some(b) => interpolate_value(b, data, now),
            };
            let status = if req.dry_run {
                "skipped (dry run)"
            } else if req.writes_fields {
                PENDING_WRITE
            } else {
                "not called (only rules triggered by events call the platform)"
            };
            ok(json!({
                "endpoint": action.text("endpoint").unwrap_or_default(),
                "method": method,
                "apiKeyId": action.text("apiKeyId"),
                "body": body,
                "status": status,
            }))
        }
    }
}

/// Keys whose values never reach the execution log.
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "auth",
    "credit_card",
    "creditcard",
    "card_number",
    "cardnumber",
    "cvv",
    "ssn",
    "social_security",
    "tax_id",
    "taxid",
    "driver_license",
    "passport",
];
const REDACT_DEPTH: usize = 5;

/// `data` with every value under a secret-looking key replaced by
/// `"[REDACTED]"`, and anything deeper than five levels cut.
pub fn redact(value: &Value, depth: usize) -> Value {
    if depth > REDACT_DEPTH {
        return json!("[Max depth exceeded]");
    }
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let key = k.to_ascii_lowercase().replace('-', "_");
                    if SECRET_KEYS.iter().any(|s| key.contains(s)) {
                        (k.clone(), json!("[REDACTED]"))
                    } else {
                        (k.clone(), redact(v, depth + 1))
                    }
                })
                .collect(),
        ),
        Value::Array(list) => list.iter().map(|v| redact(v, depth + 1)).collect(),
        other => other.clone(),
    }
}

/// An action as the execution log shows it; a platform call also names the
/// API key it ran as, the operation and its answer's status.
fn logged(r: &ActionResult) -> Value {
    let mut entry = json!({"type": r.kind, "success": r.success, "error": r.error});
    if r.kind == "CALL_OPEN_MERCATO" {
        for key in ["apiKeyId", "endpoint", "method", "httpStatus"] {
            entry[key] = r.result.get(key).cloned().unwrap_or(Value::Null);
        }
    }
    entry
}

fn log_of(outcome: &RuleOutcome, req: &Request) -> NewLog {
    let result = match (&outcome.error, outcome.condition_result) {
        (Some(_), _) => "ERROR",
        (None, true) => "SUCCESS",
        (None, false) => "FAILURE",
    };
    let role = req.user.get("role").cloned().unwrap_or(Value::Null);
    let id = req.user.get("id").cloned().unwrap_or(Value::Null);
    NewLog {
        rule_id: outcome.rule.id,
        tenant_id: req.tenant_id,
        organization_id: Some(req.organization_id),
        entity_id: req
            .entity_id
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "unknown".into()),
        entity_type: req.entity_type.clone(),
        execution_result: result.into(),
        input_context: Some(json!({
            "data": redact(&req.data, 1),
            "eventType": req.event_type,
            "user": {"id": id, "role": role},
        })),
        output_context: outcome.actions.as_ref().map(|a| {
            json!({
                "conditionResult": outcome.condition_result,
                "actionsExecuted": a.results.iter().map(logged).collect::<Vec<_>>(),
            })
        }),
        error_message: outcome.error.clone(),
        execution_time_ms: outcome.execution_time_ms.round().min(f64::from(i32::MAX)) as i32,
        executed_by: req.executed_by.clone(),
    }
}

/// Writes what a run leaves behind, in one transaction: a log row per
/// executed rule (ids set on the outcomes), the webhook jobs, the emitted
/// events, the mail, and (with `failure_events`) an
/// `execution_failed` event per failed rule. A dry run writes nothing.
pub async fn commit(
    conn: &mut AsyncPgConnection,
    req: &Request,
    run: &mut Run,
    failure_events: bool,
) -> Result<(), AppError> {
    if req.dry_run || run.outcomes.is_empty() {
        return Ok(());
    }
    let logs: Vec<NewLog> = run.outcomes.iter().map(|o| log_of(o, req)).collect();
    // Rules write as business rules, whatever event name a rule was given:
    // subscribers that act (mail, storage cleanup) trust only their own
    // modules' events (`Origin`).
    let envelope = Envelope {
        origin: Origin::module(RULES_ORIGIN),
        tenant_id: Some(req.tenant_id),
        organization_id: Some(req.organization_id),
        actor: EventActor {
            user_id: req
                .user
                .get("id")
                .and_then(Value::as_str)
                .and_then(|s| s.parse().ok()),
            source: Some("system".into()),
        },
        command_id: Some(EMIT_COMMAND.into()),
        action_log_id: None,
        resource_kind: Some(req.entity_type.clone()),
        resource_id: req.entity_id.clone(),
    };
    let effects = &run.effects;
    let failed: Vec<Value> = if failure_events {
        run.outcomes
            .iter()
            .filter_map(|o| {
                o.error.as_ref().map(|e| {
                    json!({
                        "ruleId": o.rule.rule_id,
                        "ruleName": o.rule.rule_name,
                        "entityType": req.entity_type,
                        "errorMessage": e,
                        "tenantId": req.tenant_id,
                        "organizationId": req.organization_id,
                    })
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    let ids: Vec<i64> = conn
        .transaction(async |conn| {
            let ids: Vec<i64> = diesel::insert_into(business_rule_logs::table)
                .values(&logs)
                .returning(business_rule_logs::id)
                .get_results(conn)
                .await?;
            let mut events = Vec::new();
            for effect in effects {
                match effect {
                    Effect::Webhook(call) => {
                        stoa_jobs::enqueue(conn, WEBHOOK_JOB, call, None, 5).await?;
                    }
                    Effect::Emit { name, payload } => {
                        events.push((Event::new(name.clone(), payload.clone()), envelope.clone()));
                    }
                    Effect::Mail(mail) => {
                        stoa_mail::queue(conn, mail, Some(req.tenant_id)).await?;
                    }
                }
            }
            for payload in &failed {
                events.push((Event::new(FAILED_EVENT, payload.clone()), envelope.clone()));
            }
            outbox::enqueue_many(conn, &events).await?;
            Ok::<_, AppError>(ids)
        })
        .await?;
    for (outcome, id) in run.outcomes.iter_mut().zip(ids) {
        outcome.log_id = Some(id);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_depth_is_cut() {
        let data = json!({
            "title": "Deal",
            "password": "hunter2",
            "nested": {"apiKey": "k", "Auth-Token": "t", "ok": 1},
            "deep": {"a": {"b": {"c": {"d": {"e": 1}}}}},
        });
        let out = redact(&data, 1);
        assert_eq!(out["title"], "Deal");
        assert_eq!(out["password"], "[REDACTED]");
        assert_eq!(out["nested"]["apiKey"], "[REDACTED]");
        assert_eq!(out["nested"]["Auth-Token"], "[REDACTED]");
        assert_eq!(out["nested"]["ok"], 1);
        assert_eq!(out["deep"]["a"]["b"]["c"]["d"], "[Max depth exceeded]");
    }
}
