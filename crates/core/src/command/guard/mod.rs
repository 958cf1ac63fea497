//! Write guards: synchronous checks that may refuse a write before it commits.
//!
//! A [`WriteGuard`] runs inside the command's transaction, after the command
//! made its change and produced its [`LogEntry`], and before the entry and its
//! events are recorded. It sees what a rule engine needs to decide — the
//! command id, the actor (tenant, organization, user, principal), the
//! resource and its before/after snapshots — and may query the database on the
//! same connection (it sees the change). A refusal carries the guard's id
//! and a list of [`Violation`]s (a rules engine reports every rule that
//! failed) and becomes `422 {"error": "Refused by guard '<id>': <messages>",
//! "code": "guard_refused", "guard": "<id>", "details": {"guard": "<id>",
//! "violations": [{"message", "code"?, "field"?}]}}`; since the transaction
//! rolls back, nothing of the command is stored: not the change, not the
//! action-log entry, not its events.
//!
//! [`WriteGuard::applies_to`] sees the command id and the tenant, so a guard
//! with no rules for a tenant skips without a query. What a guard must log
//! about its decision ([`GuardInput::log`]) survives a refusal: the entries go
//! to `guard_logs` on a connection of their own when the write is refused
//! (the write's own transaction is about to roll back), and in the write's
//! transaction when it goes through (they commit with it).
//!
//! Guards run for [`execute`](super::execute), for every entry of
//! [`execute_batch`](super::execute_batch) and
//! [`record_batch`](super::record_batch), and for undo and redo (which are
//! writes too). Outbox subscribers stay for side effects after commit.
//!
//! A module contributes guards at startup (`stoa_acl::Registry::add_write_guard`);
//! they travel with the caller's [`Actor`] (`Actor::guards`), so no module
//! depends on the one that refuses.

mod guards;

pub use guards::WriteGuards;

use std::sync::Mutex;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::{Actor, LogEntry};
use crate::error::AppError;

/// One reason a guard refuses a write.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Shown to the caller.
    pub message: String,
    /// A stable code for clients (`credit_limit_exceeded`), when the rule has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The field of the resource the rule is about, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl Violation {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            ..Self::default()
        }
    }

    pub fn code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

/// What a guard decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Refuse the write with one reason, shown after the guard's id.
    Refuse(String),
    /// Refuse the write with every reason found (at least one; an empty
    /// list still refuses, as "Refused").
    Violations(Vec<Violation>),
}

impl Verdict {
    /// The violations of a refusal (`None`: allowed).
    pub fn violations(self) -> Option<Vec<Violation>> {
        match self {
            Self::Allow => None,
            Self::Refuse(message) => Some(vec![Violation::new(message)]),
            Self::Violations(list) => Some(list),
        }
    }
}

/// One entry a guard logs about a decision ([`GuardInput::log`]).
#[derive(Clone, Debug, PartialEq)]
pub struct GuardLogEntry {
    pub message: String,
    pub data: Option<Value>,
}

/// The entries guards logged while one write was checked.
#[derive(Debug, Default)]
pub struct GuardLog(Mutex<Vec<(String, GuardLogEntry)>>);

impl GuardLog {
    fn push(&self, guard: &str, entry: GuardLogEntry) {
        if let Ok(mut list) = self.0.lock() {
            list.push((guard.to_string(), entry));
        }
    }

    fn take(&self) -> Vec<(String, GuardLogEntry)> {
        self.0
            .lock()
            .map(|mut list| std::mem::take(&mut *list))
            .unwrap_or_default()
    }
}

/// Which kind of write a guard is asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// A command run through the bus (alone or in a batch).
    Execute,
    /// The undo of a logged command: the entry's snapshots are reversed
    /// (before = the state undo replaced, after = the state it restored).
    Undo,
    /// The redo of an undone command.
    Redo,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Execute => "execute",
            Self::Undo => "undo",
            Self::Redo => "redo",
        }
    }
}

/// Everything a guard sees of one write.
#[derive(Clone, Copy, Debug)]
pub struct GuardInput<'a> {
    /// `module.entity.verb` (for undo/redo: the original command's id).
    pub command_id: &'a str,
    pub phase: Phase,
    pub actor: &'a Actor,
    /// The entry the write produced (resource, snapshots, undo payload, events).
    pub entry: &'a LogEntry,
    /// Where [`log`](Self::log) puts entries (set by the bus).
    pub(crate) log: &'a GuardLog,
    /// The guard being asked (set by [`WriteGuards::check`] per guard).
    pub(crate) guard: &'a str,
}

impl<'a> GuardInput<'a> {
    /// The input of one write, for [`WriteGuards::check`] (the bus builds
    /// it; tests of a guard may too).
    pub fn new(
        command_id: &'a str,
        phase: Phase,
        actor: &'a Actor,
        entry: &'a LogEntry,
        log: &'a GuardLog,
    ) -> Self {
        Self {
            command_id,
            phase,
            actor,
            entry,
            log,
            guard: "",
        }
    }

    /// Logs something about this decision to `guard_logs` (with the guard's
    /// id, the command, the actor and the resource). Kept whatever the
    /// outcome: a refusal's entries are written after it on a connection of
    /// their own, an allowed write's with the write.
    pub fn log(&self, message: impl Into<String>, data: Option<Value>) {
        self.log.push(
            self.guard,
            GuardLogEntry {
                message: message.into(),
                data,
            },
        );
    }

    fn for_guard(&self, guard: &'a str) -> Self {
        Self { guard, ..*self }
    }
}

impl GuardInput<'_> {
    /// The tenant the entry is recorded in.
    pub fn tenant_id(&self) -> Option<Uuid> {
        self.entry.tenant_id.or(self.actor.tenant_id)
    }

    /// The organization the entry is recorded in.
    pub fn organization_id(&self) -> Option<Uuid> {
        self.entry.organization_id.or(self.actor.organization_id)
    }

    pub fn resource_kind(&self) -> Option<&str> {
        self.entry.resource_kind.as_deref()
    }

    pub fn resource_id(&self) -> Option<&str> {
        self.entry.resource_id.as_deref()
    }

    /// The resource before the write (`None`: it did not exist).
    pub fn before(&self) -> Option<&Value> {
        self.entry.snapshot_before.as_ref()
    }

    /// The resource after the write (`None`: it no longer exists).
    pub fn after(&self) -> Option<&Value> {
        self.entry.snapshot_after.as_ref()
    }
}

/// A synchronous check that may refuse a write inside its transaction.
///
/// Return `Ok(Verdict::Refuse(..))` to refuse (422 naming the guard); an `Err`
/// is a failure of the guard itself (a database error: 500/503) and also
/// rolls the write back.
pub trait WriteGuard: Send + Sync {
    /// Stable id named in refusals, `module.rule` (e.g. `rules.credit_limit`).
    fn id(&self) -> &str;
    /// Whether the guard looks at commands with this id in this tenant
    /// (`None`: a write outside any tenant); a cheap filter checked before
    /// [`check`](Self::check), without a query (a rules engine keeps the set
    /// of tenants that have rules in memory). Default: every write.
    fn applies_to(&self, command_id: &str, tenant_id: Option<Uuid>) -> bool {
        let _ = (command_id, tenant_id);
        true
    }
    /// [`applies_to`](Self::applies_to) as it stands now: a guard whose
    /// memory may be stale (a rules engine's cache after its refresh
    /// interval, when `applies_to` answers `true` to be safe) reads it
    /// again on `conn`. For a writer that picks its way of writing before
    /// it writes (a bulk job's unit records in SQL when no guard applies,
    /// [`super::record_set`]). Default: `applies_to`.
    fn applies_now<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        command_id: &'a str,
        tenant_id: Option<Uuid>,
    ) -> BoxFuture<'a, Result<bool, AppError>> {
        let _ = conn;
        let applies = self.applies_to(command_id, tenant_id);
        Box::pin(async move { Ok(applies) })
    }
    /// Decides on one write. `conn` is the write's transaction.
    fn check<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        input: &'a GuardInput<'a>,
    ) -> BoxFuture<'a, Result<Verdict, AppError>>;
}

/// 422 `guard_refused`, naming the guard, with one violation.
pub fn refused(guard: &str, message: &str) -> AppError {
    refused_with(guard, &[Violation::new(message)])
}

/// 422 `guard_refused`: `{error, code, guard, details: {guard, violations}}`;
/// `error` joins the violations' messages.
pub fn refused_with(guard: &str, violations: &[Violation]) -> AppError {
    let messages: Vec<&str> = violations.iter().map(|v| v.message.as_str()).collect();
    let message = if messages.is_empty() {
        "Refused".to_string()
    } else {
        messages.join("; ")
    };
    AppError::unprocessable(format!("Refused by guard '{guard}': {message}"))
        .with_code("guard_refused")
        .with_field("guard", guard)
        .with_field(
            "details",
            serde_json::json!({ "guard": guard, "violations": violations }),
        )
}

#[cfg(test)]
mod tests;
