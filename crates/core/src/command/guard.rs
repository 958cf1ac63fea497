//! Write guards: synchronous checks that may refuse a write before it commits.
//!
//! A [`WriteGuard`] runs inside the command's transaction, after the command
//! made its change and produced its [`LogEntry`], and before the entry and its
//! events are recorded. It sees what a rule engine needs to decide — the
//! command id, the actor (tenant, organization, user, principal), the
//! resource and its before/after snapshots — and may query the database on the
//! same connection (it sees the change). A refusal becomes
//! `422 {"error": "Refused by guard '<id>': <message>", "code": "guard_refused",
//! "guard": "<id>"}` and, since the transaction rolls back, nothing of the
//! command is stored: not the change, not the action-log entry, not its events.
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
use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::Value;
use uuid::Uuid;

use super::{Actor, LogEntry};
use crate::error::AppError;

/// What a guard decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Refuse the write; the message is shown to the caller after the guard's id.
    Refuse(String),
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
    /// Whether the guard looks at commands with this id; a cheap filter
    /// checked before [`check`](Self::check) (default: every command).
    fn applies_to(&self, command_id: &str) -> bool {
        let _ = command_id;
        true
    }
    /// Decides on one write. `conn` is the write's transaction.
    fn check<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        input: &'a GuardInput<'a>,
    ) -> BoxFuture<'a, Result<Verdict, AppError>>;
}

/// 422 `guard_refused`, naming the guard.
pub fn refused(guard: &str, message: &str) -> AppError {
    AppError::unprocessable(format!("Refused by guard '{guard}': {message}"))
        .with_code("guard_refused")
        .with_field("guard", guard)
}

/// The guards registered at startup, in registration order. Cheap to clone.
#[derive(Clone, Default)]
pub struct WriteGuards(Arc<[Arc<dyn WriteGuard>]>);

impl fmt::Debug for WriteGuards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|g| g.id()))
            .finish()
    }
}

impl From<Vec<Arc<dyn WriteGuard>>> for WriteGuards {
    fn from(guards: Vec<Arc<dyn WriteGuard>>) -> Self {
        Self(guards.into())
    }
}

impl WriteGuards {
    /// These guards and `guard` after them; a guard with the same id is replaced.
    pub fn with(&self, guard: Arc<dyn WriteGuard>) -> Self {
        let mut list: Vec<Arc<dyn WriteGuard>> = self
            .0
            .iter()
            .filter(|g| g.id() != guard.id())
            .cloned()
            .collect();
        list.push(guard);
        Self(list.into())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn WriteGuard>> {
        self.0.iter()
    }

    /// Asks every guard that applies; the first refusal wins.
    pub async fn check(
        &self,
        conn: &mut AsyncPgConnection,
        input: &GuardInput<'_>,
    ) -> Result<(), AppError> {
        for guard in self.0.iter().filter(|g| g.applies_to(input.command_id)) {
            if let Verdict::Refuse(message) = guard.check(conn, input).await? {
                tracing::info!(
                    guard = guard.id(),
                    command = input.command_id,
                    phase = input.phase.as_str(),
                    resource.kind = input.resource_kind(),
                    resource.id = input.resource_id(),
                    "write refused by guard"
                );
                return Err(refused(guard.id(), &message));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Named(&'static str);

    impl WriteGuard for Named {
        fn id(&self) -> &str {
            self.0
        }
        fn check<'a>(
            &'a self,
            _: &'a mut AsyncPgConnection,
            _: &'a GuardInput<'a>,
        ) -> BoxFuture<'a, Result<Verdict, AppError>> {
            Box::pin(async { Ok(Verdict::Allow) })
        }
    }

    #[test]
    fn refusal_names_the_guard() {
        let err = refused("rules.credit_limit", "Credit limit exceeded");
        assert_eq!(err.status(), 422);
        assert_eq!(
            err.message(),
            "Refused by guard 'rules.credit_limit': Credit limit exceeded"
        );
        assert_eq!(err.code(), Some("guard_refused"));
        assert_eq!(err.body()["guard"], "rules.credit_limit");
    }

    #[test]
    fn a_guard_registered_again_replaces_the_earlier_one() {
        let guards = WriteGuards::default()
            .with(Arc::new(Named("a")))
            .with(Arc::new(Named("b")))
            .with(Arc::new(Named("a")));
        assert_eq!(format!("{guards:?}"), r#"["b", "a"]"#);
        assert_eq!(guards.len(), 2);
    }
}
