//! Undo and redo: the logged row handlers receive, the handler and
//! interceptor traits, and the registry that maps command ids to handlers.

use std::collections::HashMap;
use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::schema::action_logs;
use super::{Actor, LogEntry};
use crate::error::AppError;

/// One action-log row, as undo and redo handlers receive it.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = action_logs)]
pub struct ActionLog {
    pub id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub actor_user_id: Option<Uuid>,
    pub command_id: String,
    pub action_label: Option<String>,
    pub resource_kind: Option<String>,
    pub resource_id: Option<String>,
    pub execution_state: String,
    pub undo_token: Option<String>,
    pub command_payload: Option<Value>,
    pub snapshot_before: Option<Value>,
    pub snapshot_after: Option<Value>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub other_tenant_ids: Vec<Uuid>,
    pub actor_is_super_admin: bool,
}

impl ActionLog {
    /// The undo payload the command stored.
    pub fn undo_payload(&self) -> Option<&Value> {
        self.command_payload.as_ref().and_then(|p| p.get("undo"))
    }
}

/// What an undo did not write back: fields it never restores (credentials,
/// security flags), left as they are now. Reported to the caller.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UndoReport {
    pub not_restored: Vec<String>,
}

/// Reverses and re-applies one command id.
///
/// Undo and redo are writes like any other: a handler authorizes the state it
/// is about to write for the current caller (`actor.principal`), now, with the
/// same checks as the forward command, refuses (409) when the resource changed
/// since the entry, and never writes back credentials or security flags.
/// [`StateHandler`](super::StateHandler) does all of this for
/// [`Tracked`](super::Tracked) resources.
pub trait CommandHandler: Send + Sync {
    fn command_id(&self) -> &'static str;
    /// Restores the state before the logged command.
    fn undo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<UndoReport, AppError>>;
    /// Applies the logged command again; returns the new entry (with an undo payload).
    fn redo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<LogEntry, AppError>>;
}

/// May refuse an undo: return an error with the status and body to answer
/// (422 is the convention).
pub trait UndoInterceptor: Send + Sync {
    fn before_undo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<(), AppError>>;
}

/// Every module's undo/redo handlers and the undo interceptors.
#[derive(Clone, Default)]
pub struct CommandRegistry {
    handlers: HashMap<&'static str, Arc<dyn CommandHandler>>,
    pub(super) interceptors: Vec<Arc<dyn UndoInterceptor>>,
}

impl CommandRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn handler(mut self, handler: Arc<dyn CommandHandler>) -> Self {
        self.handlers.insert(handler.command_id(), handler);
        self
    }

    pub fn interceptor(mut self, interceptor: Arc<dyn UndoInterceptor>) -> Self {
        self.interceptors.push(interceptor);
        self
    }

    pub fn get(&self, command_id: &str) -> Option<&Arc<dyn CommandHandler>> {
        self.handlers.get(command_id)
    }
}
