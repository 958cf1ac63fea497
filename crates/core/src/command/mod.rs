//! The command bus: the one write path of every module.
//!
//! A mutation is a [`Command`]. [`execute`] runs it on the caller's connection
//! (inside the caller's transaction) and, in that same transaction, writes its
//! action-log entry and its outbox events: a change and its audit record commit
//! together or not at all. A command that returns an undo payload is undoable:
//! its entry gets an undo token, and the [`Operation`] it returns renders the
//! reference's `x-om-operation` response header.
//!
//! Before anything is recorded, the caller's [`WriteGuard`]s (`Actor::guards`)
//! see the entry the command produced and may refuse it (422, [`guard`]); the
//! transaction then rolls back and nothing of the command is stored. Bulk work
//! records many entries with one statement per table ([`execute_batch`],
//! [`record_batch`]), with the same content as one-by-one recording, or with
//! one statement for the change and its records, built in SQL, when no
//! guard applies ([`record_set`]).
//!
//! Undo and redo go through a [`CommandRegistry`] that maps command ids to
//! [`CommandHandler`]s; [`UndoInterceptor`]s may refuse an undo (422 by default,
//! or whatever status and body they return). Write guards run for undo and redo
//! too.

pub mod access;
mod actor;
mod batch;
mod batch_sql;
pub mod diff;
pub mod guard;
mod operation;
pub mod outbox;
pub mod outbox_retention;
pub mod pruned;
mod record;
mod registry;
pub mod schema;
pub mod tracked;
mod undo;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::Value;
use uuid::Uuid;

use crate::error::AppError;

pub use actor::{Actor, Principal};
pub use batch::{execute_batch, record_batch};
pub use batch_sql::{FIRST_PARAM, SetSource, record_set, set_statement};
pub use guard::{GuardInput, GuardLog, Phase, Verdict, Violation, WriteGuard, WriteGuards};
pub use operation::{OPERATION_HEADER, Operation, with_operation};
pub(crate) use record::{Row, check_guards, in_transaction, record, source_key};
pub use record::{execute, run};
pub use registry::{ActionLog, CommandHandler, CommandRegistry, UndoInterceptor, UndoReport};
pub use tracked::{Authorize, StateHandler, Tracked, entry, tracked};
pub use undo::{RedoOutcome, UndoOutcome};

/// A domain event (`module.entity.verb`) to deliver after commit. A command
/// names it and gives its payload; the bus wraps it in the envelope of the
/// command's entry (tenant, organization, actor, command, action-log entry,
/// resource: [`outbox::Envelope`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub name: String,
    pub payload: Value,
}

impl Event {
    pub fn new(name: impl Into<String>, payload: Value) -> Self {
        Self {
            name: name.into(),
            payload,
        }
    }
}

/// What a command reports for its action-log entry.
#[derive(Clone, Debug, Default)]
pub struct LogEntry {
    pub action_label: Option<String>,
    pub resource_kind: Option<String>,
    pub resource_id: Option<String>,
    pub parent_resource_kind: Option<String>,
    pub parent_resource_id: Option<String>,
    /// What the resource looked like before and after (for display and diffs).
    pub snapshot_before: Option<Value>,
    pub snapshot_after: Option<Value>,
    /// What the undo handler needs; `Some` makes the entry undoable.
    pub undo: Option<Value>,
    pub context: Option<Value>,
    /// Overrides the actor's tenant/organization for the entry (e.g. a super
    /// admin acting in another tenant).
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    /// Every other tenant the change touched (a user moved between tenants):
    /// only super admins may read, undo or redo such an entry.
    pub other_tenants: Vec<Uuid>,
    pub events: Vec<Event>,
}

impl LogEntry {
    /// The same entry emitting `name` with `payload` after commit (in the
    /// envelope of this entry: tenant, organization, actor, command, resource).
    pub fn with_event(mut self, name: impl Into<String>, payload: Value) -> Self {
        self.events.push(Event::new(name, payload));
        self
    }
}

/// A mutation that runs through the bus.
pub trait Command: Send {
    type Output: Send;
    /// `module.entity.verb`, e.g. `directory.organizations.update`.
    fn id(&self) -> &'static str;
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<(Self::Output, LogEntry), AppError>>;
}
