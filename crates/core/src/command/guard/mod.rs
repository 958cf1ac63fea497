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

use std::fmt;
use std::sync::{Arc, Mutex};

use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::schema::guard_logs;
use super::{Actor, LogEntry};
use crate::db::Db;
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

/// The guards registered at startup, in registration order, and the pool
/// a refusal's log entries are written through. Cheap to clone.
#[derive(Clone, Default)]
pub struct WriteGuards {
    list: Arc<[Arc<dyn WriteGuard>]>,
    log_db: Option<Db>,
}

impl fmt::Debug for WriteGuards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.list.iter().map(|g| g.id()))
            .finish()
    }
}

impl From<Vec<Arc<dyn WriteGuard>>> for WriteGuards {
    fn from(guards: Vec<Arc<dyn WriteGuard>>) -> Self {
        Self {
            list: guards.into(),
            log_db: None,
        }
    }
}

impl WriteGuards {
    /// These guards and `guard` after them; a guard with the same id is replaced.
    pub fn with(&self, guard: Arc<dyn WriteGuard>) -> Self {
        let mut list: Vec<Arc<dyn WriteGuard>> = self
            .list
            .iter()
            .filter(|g| g.id() != guard.id())
            .cloned()
            .collect();
        list.push(guard);
        Self {
            list: list.into(),
            log_db: self.log_db.clone(),
        }
    }

    /// The same guards, writing a refusal's log entries through `db` (a
    /// connection of their own, so they outlive the rolled-back write).
    /// Without it those entries only reach the tracing log.
    pub fn logging_to(mut self, db: Db) -> Self {
        self.log_db = Some(db);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether any guard applies to `command_id` in `tenant`
    /// ([`WriteGuard::applies_now`]: each guard reads again what it keeps in
    /// memory if that was stale): when none does, [`check`](Self::check)
    /// allows every write of it without asking, and a bulk job may record
    /// it in SQL ([`super::record_set`]).
    pub async fn applies_now(
        &self,
        conn: &mut AsyncPgConnection,
        command_id: &str,
        tenant_id: Option<Uuid>,
    ) -> Result<bool, AppError> {
        for guard in self.list.iter() {
            if guard.applies_now(conn, command_id, tenant_id).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn WriteGuard>> {
        self.list.iter()
    }

    /// Asks every guard that applies; the first refusal wins. Entries the
    /// guards logged are written to `guard_logs`: on `conn` (with the write)
    /// when it goes through, on a connection of their own when it is refused.
    pub async fn check(
        &self,
        conn: &mut AsyncPgConnection,
        input: &GuardInput<'_>,
    ) -> Result<(), AppError> {
        let tenant = input.tenant_id();
        for guard in self
            .list
            .iter()
            .filter(|g| g.applies_to(input.command_id, tenant))
        {
            let asked = input.for_guard(guard.id());
            let Some(violations) = guard.check(conn, &asked).await?.violations() else {
                continue;
            };
            tracing::info!(
                guard = guard.id(),
                command = input.command_id,
                phase = input.phase.as_str(),
                resource.kind = input.resource_kind(),
                resource.id = input.resource_id(),
                violations = violations.len(),
                "write refused by guard"
            );
            let refusal = refused_with(guard.id(), &violations);
            let logged = input.log.take();
            if !logged.is_empty() {
                self.write_refusal_log(input, logged).await;
            }
            return Err(refusal);
        }
        let logged = input.log.take();
        if !logged.is_empty() {
            insert_log(conn, input, "allowed", logged).await?;
        }
        Ok(())
    }

    /// A refusal's entries, on a connection of their own: the write's
    /// transaction is about to roll back. A failure here is logged and does
    /// not change the answer (the refusal stands).
    async fn write_refusal_log(
        &self,
        input: &GuardInput<'_>,
        logged: Vec<(String, GuardLogEntry)>,
    ) {
        let Some(db) = &self.log_db else {
            for (guard, entry) in &logged {
                tracing::warn!(guard, message = %entry.message, "guard log entry not stored (no log database)");
            }
            return;
        };
        let written = match db.conn().await {
            Ok(mut own) => insert_log(&mut own, input, "refused", logged)
                .await
                .map_err(|e| e.to_string()),
            Err(err) => Err(err.to_string()),
        };
        if let Err(err) = written {
            tracing::error!(error = %err, command = input.command_id, "guard log entries of a refusal were lost");
        }
    }
}

async fn insert_log(
    conn: &mut AsyncPgConnection,
    input: &GuardInput<'_>,
    outcome: &str,
    logged: Vec<(String, GuardLogEntry)>,
) -> Result<(), AppError> {
    use diesel::ExpressionMethods;
    let rows: Vec<_> = logged
        .into_iter()
        .map(|(guard, entry)| {
            (
                guard_logs::tenant_id.eq(input.tenant_id()),
                guard_logs::organization_id.eq(input.organization_id()),
                guard_logs::actor_user_id.eq(input.actor.user_id),
                guard_logs::guard.eq(guard),
                guard_logs::command_id.eq(input.command_id),
                guard_logs::phase.eq(input.phase.as_str()),
                guard_logs::resource_kind.eq(input.resource_kind()),
                guard_logs::resource_id.eq(input.resource_id()),
                guard_logs::outcome.eq(outcome),
                guard_logs::message.eq(entry.message),
                guard_logs::data.eq(entry.data),
            )
        })
        .collect();
    diesel::insert_into(guard_logs::table)
        .values(rows)
        .execute(conn)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests;
