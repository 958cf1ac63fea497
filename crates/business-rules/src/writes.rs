//! `SET_FIELD` writes, done by the event trigger after the triggering write
//! committed and before the run's logs are written (so the log shows each
//! write's outcome). Each write goes through the entity's own update command
//! (the `stoa_acl::RuleWriter` slot its module declares): command bus, action
//! log, undo, events and write guards (GUARD rules included) all apply.
//!
//! Who writes: a system principal of the rule — no user, the rule's tenant,
//! only the record's organization, only the writer's features (which the
//! rule's author had to hold to save the rule), the registry's write guards
//! — bounded by the rule's author as they stand now (`crate::authors`): a
//! feature or organization the author lost is one the write lacks.
//! The action-log entry has no `actor_user_id`, source `system`, and names
//! the rule in its context (`{"businessRule": {id, ruleId, ruleName}}`);
//! the trigger skips events of entries carrying that context, so a rule's
//! write never triggers rules (no loops).

use std::collections::HashMap;

use diesel_async::AsyncConnection;
use serde_json::{Value, json};
use stoa_acl::{AuthContext, FieldWrite, Registry, ResolvedAcl, RuleWriter};
use stoa_core::AppError;
use stoa_core::db::Db;
use uuid::Uuid;

use crate::engine::{ActionResult, CompiledRule, PENDING_WRITE, Request, Run};

/// The action-log context key naming the rule behind a write.
pub const CONTEXT_KEY: &str = "businessRule";

/// The context a rule's write records.
pub fn context_of(rule: &CompiledRule) -> Value {
    json!({CONTEXT_KEY: {"id": rule.id, "ruleId": rule.rule_id, "ruleName": rule.rule_name}})
}

/// Whether an action-log context says a rule made the write.
pub fn by_rule(context: Option<&Value>) -> bool {
    context.is_some_and(|c| c.get(CONTEXT_KEY).is_some())
}

/// The system principal a rule writes as (see the module docs).
fn principal(req: &Request, writer: &RuleWriter, registry: &Registry) -> AuthContext {
    let org = req.organization_id;
    let mut auth =
        AuthContext::for_user(req.tenant_id, Some(org), None::<uuid::Uuid>).with_acl(ResolvedAcl {
            features: writer.features.iter().map(|f| f.to_string()).collect(),
            allowed_organization_ids: Some(vec![org]),
            selected_organization_id: Some(org),
            visible_organization_ids: Some(vec![org]),
            ..ResolvedAcl::default()
        });
    auth.guards = registry.write_guards().clone();
    auth
}

fn is_pending(result: &ActionResult) -> bool {
    result.kind == "SET_FIELD" && result.result["status"] == PENDING_WRITE
}

/// Whether `run` has `SET_FIELD` writes to perform.
pub fn pending(run: &Run) -> bool {
    run.outcomes
        .iter()
        .filter_map(|o| o.actions.as_ref())
        .any(|a| a.results.iter().any(is_pending))
}

/// Performs the pending `SET_FIELD` writes of `run`, in rule order, and
/// records each outcome on its action result (`status` `written` with the
/// operation, or `failed` with the error: a guard's refusal, a bad value).
pub async fn perform(
    db: &Db,
    registry: &Registry,
    req: &Request,
    run: &mut Run,
    authors: &HashMap<Uuid, AuthContext>,
) {
    let writer = registry.rule_writer(&req.entity_type);
    let system = writer.map(|w| principal(req, w, registry));
    for outcome in &mut run.outcomes {
        let rule = outcome.rule.clone();
        // The rule's principal acting for its author: what both hold.
        let auth = match (&system, authors.get(&rule.id)) {
            (Some(system), Some(author)) => Some(system.delegated_by(author)),
            (system, _) => system.clone(),
        };
        let Some(actions) = outcome.actions.as_mut() else {
            continue;
        };
        for result in &mut actions.results {
            if !is_pending(result) {
                continue;
            }
            let field = result.result["field"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let value = result.result["value"].clone();
            let done = match (writer, &auth, req.entity_id.as_deref()) {
                (Some(writer), Some(auth), Some(record_id)) => {
                    write(db, writer, auth, record_id, &field, value, &rule).await
                }
                (None, _, _) | (_, None, _) => Err(AppError::bad_request(format!(
                    "entity type {} has no fields rules may write",
                    req.entity_type
                ))),
                (_, _, None) => Err(AppError::bad_request("the event names no record")),
            };
            match done {
                Ok(operation) => {
                    result.result["status"] = json!("written");
                    result.result["operation"] = operation;
                }
                Err(e) => {
                    tracing::info!(rule = %rule.rule_id, error = %e.message(), "SET_FIELD not written");
                    result.success = false;
                    result.error = Some(e.message().to_string());
                    result.result["status"] = json!("failed");
                }
            }
        }
        actions.success = actions.results.iter().all(|r| r.success);
    }
}

async fn write(
    db: &Db,
    writer: &RuleWriter,
    auth: &AuthContext,
    record_id: &str,
    field: &str,
    value: Value,
    rule: &CompiledRule,
) -> Result<Value, AppError> {
    // A value from a placeholder was not checked at save.
    writer
        .check(field, &value)
        .map_err(|m| AppError::bad_request(format!("{field} {m}")))?;
    // Each write is its own transaction: one refused write leaves the
    // rule's other writes (and the triggering write) as they are.
    let context = context_of(rule);
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        writer
            .writer
            .write(FieldWrite {
                conn,
                auth,
                record_id,
                field,
                value,
                context,
            })
            .await
    })
    .await
}
