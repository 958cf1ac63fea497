//! `CALL_OPEN_MERCATO`: the event trigger calls the named operation after
//! the triggering write committed (after the run's `SET_FIELD` writes, before
//! its logs are written, so the log shows each call's outcome), through the
//! server's in-process caller (`stoa_acl::PlatformSlot`): the app's own
//! service path, authorised as the action's API key — its roles now, bounded
//! by its creator now and by the rule's author now (`crate::authors`: the
//! key acts with what both hold), the rule's organization selected. A key that is
//! unknown in the rule's tenant, revoked or expired is refused; an operation
//! the key may not call answers 403 like any request of the key. The call's
//! writes are recorded as the key with source `business_rule`, and the
//! trigger skips their events (no loops).

use std::collections::HashMap;

use serde_json::{Value, json};
use stoa_acl::{AuthContext, PlatformCall, PlatformSlot};
use uuid::Uuid;

use crate::engine::{ActionResult, PENDING_WRITE, Request, Run};

/// Longest body kept in the action's result.
const MAX_KEPT_BODY: usize = 4 * 1024;

fn is_pending(result: &ActionResult) -> bool {
    result.kind == "CALL_OPEN_MERCATO" && result.result["status"] == PENDING_WRITE
}

/// Whether `run` has platform calls to make.
pub fn pending(run: &Run) -> bool {
    run.outcomes
        .iter()
        .filter_map(|o| o.actions.as_ref())
        .any(|a| a.results.iter().any(is_pending))
}

fn kept(body: Value) -> Value {
    let text = body.to_string();
    if text.len() <= MAX_KEPT_BODY {
        body
    } else {
        json!({"truncated": true, "bytes": text.len()})
    }
}

/// Makes the pending calls of `run`, in rule order, recording each outcome
/// on its action result (`status` `called` with `httpStatus` and `body`, or
/// `failed` with the error).
pub async fn perform(
    slot: &PlatformSlot,
    req: &Request,
    run: &mut Run,
    authors: &HashMap<Uuid, AuthContext>,
) {
    for outcome in &mut run.outcomes {
        let rule = outcome.rule.clone();
        let author = authors.get(&rule.id).cloned();
        let Some(actions) = outcome.actions.as_mut() else {
            continue;
        };
        for result in &mut actions.results {
            if !is_pending(result) {
                continue;
            }
            let text = |key: &str| result.result[key].as_str().unwrap_or_default().to_string();
            let key = text("apiKeyId").parse::<uuid::Uuid>();
            let call = key.map(|api_key_id| PlatformCall {
                tenant_id: req.tenant_id,
                organization_id: req.organization_id,
                api_key_id,
                method: text("method"),
                path: text("endpoint"),
                body: Some(result.result["body"].clone()).filter(|b| !b.is_null()),
                headers: vec![
                    ("x-business-rule-id".into(), rule.id.to_string()),
                    (
                        "x-business-rule-entity-type".into(),
                        req.entity_type.clone(),
                    ),
                    (
                        "x-business-rule-entity-id".into(),
                        req.entity_id.clone().unwrap_or_default(),
                    ),
                ],
                author: author.clone(),
            });
            let done = match call {
                Ok(call) => slot.call(call).await.map_err(|e| e.message().to_string()),
                Err(_) => Err("apiKeyId is not a UUID".to_string()),
            };
            let error = match done {
                Ok(answer) => {
                    let status = answer.status;
                    let reason = answer
                        .body
                        .get("error")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    result.result["httpStatus"] = json!(status);
                    result.result["body"] = kept(answer.body);
                    if (200..300).contains(&status) {
                        result.result["status"] = json!("called");
                        None
                    } else {
                        Some(match reason {
                            Some(r) => {
                                format!(
                                    "CALL_OPEN_MERCATO request failed with status {status}: {r}"
                                )
                            }
                            None => {
                                format!("CALL_OPEN_MERCATO request failed with status {status}")
                            }
                        })
                    }
                }
                Err(e) => Some(format!("CALL_OPEN_MERCATO refused: {e}")),
            };
            if let Some(error) = error {
                tracing::info!(rule = %rule.rule_id, error = %error, "CALL_OPEN_MERCATO failed");
                result.success = false;
                result.error = Some(error);
                result.result["status"] = json!("failed");
            }
        }
        actions.success = actions.results.iter().all(|r| r.success);
    }
}
