//! Running discovered rules: each in isolation, its condition, then its
//! success or failure actions.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use time::OffsetDateTime;

use super::action::{ActionScope, action_base, run_action};
use super::{
    ActionResult, ActionsExecuted, CompiledRule, Effect, MAX_RULES, Request, RuleOutcome, Run,
};
use crate::condition::Scope;

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
