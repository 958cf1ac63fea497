//! Each action's outcome and effect, with its placeholders resolved.

use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use super::{ActionResult, CompiledRule, Effect, Request};
use crate::actions::{Action, ActionType};
use crate::condition::{self, Lookup, interpolate, resolve_text};

/// What every rule's actions read, built once per run: the evaluation
/// context, `data`, `tenantId`, `organizationId`, `executedBy` (each rule
/// adds its `ruleId` and `ruleName`, [`ActionScope`]).
pub(super) fn action_base(req: &Request, context: &Value) -> Value {
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
pub(super) struct ActionScope<'a> {
    pub(super) base: &'a Value,
    pub(super) names: &'a Value,
    /// The run's time (RFC 3339), for `LOG` results.
    pub(super) stamp: &'a str,
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

pub(super) fn run_action(
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
