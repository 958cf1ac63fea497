//! What a run leaves behind: its execution-log rows (secrets redacted),
//! webhook jobs, events and mail, in one transaction.

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::{Value, json};
use stoa_core::AppError;
use stoa_core::command::Event;
use stoa_core::command::outbox::{self, Envelope, EventActor, Origin};

use super::{
    ActionResult, EMIT_COMMAND, Effect, FAILED_EVENT, RULES_ORIGIN, Request, RuleOutcome, Run,
    WEBHOOK_JOB,
};
use crate::model::NewLog;
use crate::schema::business_rule_logs;

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
