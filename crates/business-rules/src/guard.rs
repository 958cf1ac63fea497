//! GUARD rules on real writes: a `stoa_core::command::WriteGuard` that runs
//! the tenant's GUARD rules for the written record's entity type (the
//! action log's resource kind, e.g. `customers.deal`) inside the write's
//! transaction. A rule whose condition is false (or fails) refuses the write:
//! 422 naming the rule, nothing of the write stored (undo, redo and each
//! bulk-job item alike). Guards run no actions: a GUARD rule's actions run
//! from the event trigger after commit, like every rule's.

use serde_json::{Value, json};
use stoa_core::AppError;
use stoa_core::command::{GuardInput, Phase, Verdict, Violation, WriteGuard};
use time::OffsetDateTime;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;

use crate::cache;
use crate::engine::{self, Request};

/// The id refusals name.
pub const GUARD_ID: &str = "business_rules.guard";

/// The guard (registered by [`crate::register`]).
pub struct RulesGuard;

/// The data a guard condition sees: the record after the write (before it,
/// for a deletion) with `previous` = the record before the write.
fn data_of(input: &GuardInput<'_>) -> Value {
    let mut data = input
        .after()
        .or(input.before())
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Value::Object(map) = &mut data
        && !map.contains_key("previous")
    {
        map.insert(
            "previous".into(),
            input.before().cloned().unwrap_or(Value::Null),
        );
    }
    data
}

/// The event verbs of the write (`customers.deal.stage_changed` →
/// `stage_changed`), for rules bound to an event type.
fn event_types(input: &GuardInput<'_>) -> Vec<String> {
    let mut verbs: Vec<String> = input
        .entry
        .events
        .iter()
        .filter_map(|e| e.name.rsplit_once('.').map(|(_, verb)| verb.to_string()))
        .collect();
    verbs.sort();
    verbs.dedup();
    verbs
}

impl WriteGuard for RulesGuard {
    fn id(&self) -> &str {
        GUARD_ID
    }

    fn applies_to(&self, _command_id: &str, tenant_id: Option<uuid::Uuid>) -> bool {
        tenant_id.is_some_and(cache::guard_may_apply)
    }

    /// Reads the tenant's rules when the cache is older than its refresh
    /// interval: without it a bulk job's unit after each second of work
    /// saw `applies_to` answer `true` and took the slower guarded path
    /// (11 of 400 units of a 100,000-deal job).
    fn applies_now<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        _command_id: &'a str,
        tenant_id: Option<uuid::Uuid>,
    ) -> BoxFuture<'a, Result<bool, AppError>> {
        Box::pin(async move {
            let Some(tenant) = tenant_id else {
                return Ok(false);
            };
            // The cached rules while fresh, read again otherwise.
            let rules = cache::rules(conn, tenant, false).await?;
            Ok(rules.iter().any(|r| r.is_guard()))
        })
    }

    fn check<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        input: &'a GuardInput<'a>,
    ) -> BoxFuture<'a, Result<Verdict, AppError>> {
        Box::pin(async move {
            let (Some(tenant), Some(organization), Some(kind)) = (
                input.tenant_id(),
                input.organization_id(),
                input.resource_kind(),
            ) else {
                return Ok(Verdict::Allow);
            };
            // Rules never guard the rules themselves (a tenant could not
            // undo a rule that refuses its own changes).
            if kind.starts_with("business_rules.") {
                return Ok(Verdict::Allow);
            }
            let rules = cache::rules(conn, tenant, false).await?;
            if !rules.iter().any(|r| r.is_guard() && r.entity_type == kind) {
                return Ok(Verdict::Allow);
            }
            let now = OffsetDateTime::now_utc();
            let verbs = event_types(input);
            // Rules bound to no event type guard every write of the entity;
            // the others guard writes emitting their event. Undo and redo
            // emit no events and may make any change: every GUARD rule of
            // the entity applies to them.
            let any_event = input.phase != Phase::Execute;
            let mut applicable: Vec<_> =
                engine::discover(&rules, organization, kind, None, true, now)
                    .into_iter()
                    .filter(|r| {
                        any_event || r.event_type.as_ref().is_none_or(|e| verbs.contains(e))
                    })
                    .collect();
            applicable.truncate(engine::MAX_RULES + 1);
            if applicable.is_empty() {
                return Ok(Verdict::Allow);
            }
            let req = Request {
                tenant_id: tenant,
                organization_id: organization,
                entity_type: kind.to_string(),
                entity_id: input.resource_id().map(str::to_string),
                event_type: verbs.first().cloned(),
                data: data_of(input),
                user: json!({"id": input.actor.user_id, "email": null, "role": null}),
                executed_by: input.actor.user_id.map(|u| u.to_string()),
                dry_run: true,
                writes_fields: false,
            };
            let run = engine::run(&applicable, &req, now);
            if run.allowed {
                return Ok(Verdict::Allow);
            }
            let mut violations: Vec<Violation> = run
                .errors
                .iter()
                .map(|e| Violation::new(e.clone()).code("rule_limit"))
                .collect();
            for outcome in run
                .outcomes
                .iter()
                .filter(|o| !(o.condition_result && o.error.is_none()))
            {
                let rule = &outcome.rule;
                let blocked = outcome
                    .actions
                    .as_ref()
                    .and_then(|a| a.results.iter().find(|r| r.kind == "BLOCK_TRANSITION"))
                    .and_then(|r| r.result.get("message").and_then(Value::as_str))
                    .map(str::to_string);
                let reason = outcome
                    .error
                    .clone()
                    .or(blocked)
                    .unwrap_or_else(|| "condition not met".into());
                violations.push(
                    Violation::new(format!(
                        "Business rule '{}' ({}) denied the write: {reason}",
                        rule.rule_name, rule.rule_id
                    ))
                    .code(rule.rule_id.clone()),
                );
                input.log(
                    format!("Business rule '{}' denied the write", rule.rule_id),
                    Some(json!({
                        "ruleId": rule.rule_id,
                        "ruleUuid": rule.id,
                        "ruleName": rule.rule_name,
                        "reason": reason,
                        "data": engine::redact(&req.data, 1),
                    })),
                );
            }
            Ok(Verdict::Violations(violations))
        })
    }
}
