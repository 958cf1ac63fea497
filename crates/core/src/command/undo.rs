//! Undo and redo, as the reference defines them, but atomic: the caller passes
//! a connection inside a transaction, the target row is locked, and the handler's
//! reversal, the state change and the trace entry commit together. The actor's
//! write guards see the reversal (or the redone entry) after the handler wrote
//! it and before it is recorded; a refusal (422) rolls all of it back.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::json;
use uuid::Uuid;

use super::schema::action_logs;
use super::{
    ActionLog, Actor, CommandRegistry, LogEntry, Operation, Phase, check_guards, pruned, record,
};
use crate::error::AppError;

pub struct UndoOutcome {
    pub log_id: Uuid,
    /// Fields the undo left as they are (credentials, security flags).
    pub not_restored: Vec<String>,
}

pub struct RedoOutcome {
    pub operation: Operation,
}

fn unavailable(message: &'static str) -> AppError {
    AppError::bad_request(message)
}

/// Whether `actor` may act on `target` (actor, tenant and organization scope).
/// Only super admins reach entries that touched another tenant, and tenant-wide
/// undo never reaches a super admin's entries for someone who is not one.
fn in_scope(actor: &Actor, target: &ActionLog, tenant_wide: bool) -> bool {
    let own = target.actor_user_id.is_some() && target.actor_user_id == actor.user_id;
    if !own && !tenant_wide {
        return false;
    }
    if !actor.is_super_admin() {
        if !target.other_tenant_ids.is_empty() {
            return false;
        }
        if !own && target.actor_is_super_admin {
            return false;
        }
    }
    if target.tenant_id.is_some() && target.tenant_id != actor.tenant_id {
        return false;
    }
    // A selection only narrows: a caller restricted to some organizations
    // reaches only entries inside them (its own entries made without an
    // organization, e.g. under the `__all__` selection, stay its own), and
    // the handler re-checks every record it writes.
    let own_without_organization = own && target.organization_id.is_none();
    if !own_without_organization && !actor.may_act_in(target.organization_id) {
        return false;
    }
    !matches!(
        (target.organization_id, actor.organization_id),
        (Some(t), Some(a)) if t != a
    )
}

type Boxed = action_logs::BoxedQuery<'static, diesel::pg::Pg>;

/// Entries of `lookup_actor` in the caller's tenant and the target's organization
/// in state `state`: where the "latest" rules look.
fn candidates(
    state: &'static str,
    lookup_actor: Option<Uuid>,
    actor: &Actor,
    target: &ActionLog,
) -> Boxed {
    let mut q = action_logs::table
        .filter(action_logs::execution_state.eq(state))
        .into_boxed();
    q = match lookup_actor {
        Some(a) => q.filter(action_logs::actor_user_id.eq(a)),
        None => q.filter(action_logs::actor_user_id.is_null()),
    };
    if let Some(t) = actor.tenant_id {
        q = q.filter(action_logs::tenant_id.eq(t));
    }
    if let Some(o) = target.organization_id {
        q = q.filter(action_logs::organization_id.eq(o));
    }
    q
}

impl CommandRegistry {
    /// Undoes the entry holding `token`. It must be the caller's (or, with
    /// `tenant_wide`, its actor's) latest undoable entry for that resource.
    pub async fn undo(
        &self,
        conn: &mut AsyncPgConnection,
        actor: &Actor,
        token: &str,
        tenant_wide: bool,
    ) -> Result<UndoOutcome, AppError> {
        const UNAVAILABLE: &str = "Undo token not available";
        let token = token.trim();
        if token.is_empty() || token.len() > 100 {
            return Err(unavailable("Invalid undo token"));
        }
        let target: Option<ActionLog> = action_logs::table
            .filter(action_logs::undo_token.eq(token))
            .select(ActionLog::as_select())
            .for_update()
            .first(conn)
            .await
            .optional()?;
        let Some(target) = target else {
            return Err(if pruned::was_pruned(conn, token).await? {
                pruned::entry_pruned(
                    "This action's log entry was removed by the audit-log retention; it can no longer be undone",
                )
            } else {
                unavailable(UNAVAILABLE)
            });
        };
        if target.execution_state != "done" || !in_scope(actor, &target, tenant_wide) {
            return Err(unavailable(UNAVAILABLE));
        }
        let lookup_actor = if tenant_wide {
            target.actor_user_id
        } else {
            actor.user_id
        };
        let latest = |with_resource: bool| {
            // Only entries at least as new as the target can be newer than it:
            // the bound prunes the older monthly partitions from the scan.
            let mut q = candidates("done", lookup_actor, actor, &target)
                .filter(action_logs::undo_token.is_not_null())
                .filter(action_logs::created_at.ge(target.created_at))
                .select(action_logs::id)
                .order((action_logs::created_at.desc(), action_logs::id.desc()));
            if with_resource {
                if let Some(kind) = target.resource_kind.clone() {
                    q = q.filter(action_logs::resource_kind.eq(kind));
                }
                if let Some(id) = target.resource_id.clone() {
                    q = q.filter(action_logs::resource_id.eq(id));
                }
            }
            q
        };
        let newest: Option<Uuid> = match latest(true).first(conn).await.optional()? {
            Some(id) => Some(id),
            None => latest(false).first(conn).await.optional()?,
        };
        if newest != Some(target.id) {
            return Err(unavailable(UNAVAILABLE));
        }
        for interceptor in &self.interceptors {
            interceptor.before_undo(conn, &target, actor).await?;
        }
        let handler = self
            .get(&target.command_id)
            .ok_or_else(|| unavailable("Undo failed"))?;
        let report = handler.undo(conn, &target, actor).await.map_err(|err| {
            if err.status().is_client_error() {
                err
            } else {
                tracing::warn!(error = %err, log = %target.id, "undo handler failed");
                unavailable("Undo failed")
            }
        })?;
        diesel::update(
            action_logs::table
                .filter(action_logs::id.eq(target.id))
                .filter(action_logs::created_at.eq(target.created_at)),
        )
        .set((
            action_logs::execution_state.eq("undone"),
            action_logs::undo_token.eq(None::<String>),
        ))
        .execute(conn)
        .await?;
        let trace = LogEntry {
            action_label: target.action_label.clone(),
            resource_kind: target.resource_kind.clone(),
            resource_id: target.resource_id.clone(),
            snapshot_before: target.snapshot_after.clone(),
            snapshot_after: target.snapshot_before.clone(),
            tenant_id: target.tenant_id,
            organization_id: target.organization_id,
            other_tenants: target.other_tenant_ids.clone(),
            ..Default::default()
        };
        // Undo is a write too: the guards see the reversal before it is kept.
        check_guards(conn, actor, &target.command_id, Phase::Undo, &trace).await?;
        let context = json!({
            "historyAction": "undo",
            "notRestored": report.not_restored,
            "sourceLogId": target.id,
            "sourceCommandId": target.command_id,
        });
        record(conn, actor, &target.command_id, trace, Some(context)).await?;
        Ok(UndoOutcome {
            log_id: target.id,
            not_restored: report.not_restored,
        })
    }

    /// Redoes an undone entry: it must be the caller's (or, with `tenant_wide`,
    /// its actor's) most recently undone entry. The new entry is undoable again.
    pub async fn redo(
        &self,
        conn: &mut AsyncPgConnection,
        actor: &Actor,
        log_id: Uuid,
        tenant_wide: bool,
    ) -> Result<RedoOutcome, AppError> {
        const UNAVAILABLE: &str = "Redo target not available";
        let target: Option<ActionLog> = action_logs::table
            .filter(action_logs::id.eq(log_id))
            .select(ActionLog::as_select())
            .for_update()
            .first(conn)
            .await
            .optional()?;
        let Some(target) = target else {
            return Err(if pruned::was_pruned(conn, &log_id.to_string()).await? {
                pruned::entry_pruned(
                    "This action's log entry was removed by the audit-log retention; it can no longer be redone",
                )
            } else {
                unavailable(UNAVAILABLE)
            });
        };
        if target.execution_state != "undone" || !in_scope(actor, &target, tenant_wide) {
            return Err(unavailable(UNAVAILABLE));
        }
        let lookup_actor = if tenant_wide {
            target.actor_user_id
        } else {
            actor.user_id
        };
        let q = candidates("undone", lookup_actor, actor, &target)
            .select(action_logs::id)
            .order((action_logs::updated_at.desc(), action_logs::id.desc()));
        let newest: Option<Uuid> = q.first(conn).await.optional()?;
        if newest != Some(target.id) {
            return Err(unavailable(UNAVAILABLE));
        }
        let handler = self
            .get(&target.command_id)
            .ok_or_else(|| unavailable("Redo data unavailable for this action"))?;
        let mut entry = handler.redo(conn, &target, actor).await.map_err(|err| {
            if err.status().is_client_error() {
                err
            } else {
                tracing::warn!(error = %err, log = %target.id, "redo handler failed");
                unavailable("Redo failed")
            }
        })?;
        entry.tenant_id = entry.tenant_id.or(target.tenant_id);
        entry.organization_id = entry.organization_id.or(target.organization_id);
        check_guards(conn, actor, &target.command_id, Phase::Redo, &entry).await?;
        let context = json!({
            "historyAction": "redo",
            "sourceLogId": target.id,
            "sourceCommandId": target.command_id,
        });
        let operation = record(conn, actor, &target.command_id, entry, Some(context)).await?;
        diesel::update(
            action_logs::table
                .filter(action_logs::id.eq(target.id))
                .filter(action_logs::created_at.eq(target.created_at)),
        )
        .set(action_logs::execution_state.eq("redone"))
        .execute(conn)
        .await?;
        Ok(RedoOutcome { operation })
    }
}
