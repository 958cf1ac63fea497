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
//! [`record_batch`]), with the same content as one-by-one recording.
//!
//! Undo and redo go through a [`CommandRegistry`] that maps command ids to
//! [`CommandHandler`]s; [`UndoInterceptor`]s may refuse an undo (422 by default,
//! or whatever status and body they return). Write guards run for undo and redo
//! too.

pub mod access;
mod batch;
pub mod diff;
pub mod guard;
pub mod outbox;
pub mod schema;
pub mod tracked;
mod undo;

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{
    AnsiTransactionManager, AsyncConnection, AsyncPgConnection, RunQueryDsl, TransactionManager,
};
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::AppError;
use schema::action_logs;

pub use batch::{execute_batch, record_batch};
pub use guard::{GuardInput, Phase, Verdict, WriteGuard, WriteGuards};
pub use tracked::{StateHandler, Tracked, entry, tracked};
pub use undo::{RedoOutcome, UndoOutcome};

/// The authenticated caller behind an [`Actor`], as the module that
/// authenticated it knows it (stoa-acl's `AuthContext`). Core only needs to
/// know whether it is a super admin; handlers that authorize a change (undo and
/// redo above all) downcast it to the concrete type they understand.
pub trait Principal: Any + Send + Sync + fmt::Debug {
    fn is_super_admin(&self) -> bool;
}

/// Who runs a command, and in which scope.
#[derive(Clone, Debug, Default)]
pub struct Actor {
    pub user_id: Option<Uuid>,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    /// `api`, `ui` or `system`.
    pub source: &'static str,
    /// The caller's identity and grants, for commands and undo handlers that
    /// authorize what they write (`None` for system work).
    pub principal: Option<Arc<dyn Principal>>,
    /// The write guards every command, undo and redo of this actor passes
    /// (registered at startup; empty for system work unless attached with
    /// [`Actor::with_guards`]).
    pub guards: WriteGuards,
}

impl Actor {
    pub fn api(
        user_id: Option<Uuid>,
        tenant_id: Option<Uuid>,
        organization_id: Option<Uuid>,
    ) -> Self {
        Self {
            user_id,
            tenant_id,
            organization_id,
            source: "api",
            principal: None,
            guards: WriteGuards::default(),
        }
    }

    /// The same actor passing `guards` on every write.
    pub fn with_guards(mut self, guards: WriteGuards) -> Self {
        self.guards = guards;
        self
    }

    /// The same actor carrying `principal`.
    pub fn with_principal(mut self, principal: Arc<dyn Principal>) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Whether the caller is a super admin (`false` without a principal).
    pub fn is_super_admin(&self) -> bool {
        self.principal.as_ref().is_some_and(|p| p.is_super_admin())
    }

    /// The principal as `T`, when it is one.
    pub fn principal_as<T: Principal>(&self) -> Option<&T> {
        let any: &dyn Any = self.principal.as_deref()?;
        any.downcast_ref::<T>()
    }
}

/// A domain event (`module.entity.verb`) to deliver after commit.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub name: String,
    pub payload: Value,
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

/// The logged operation, as clients see it in `x-om-operation`.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    pub id: Uuid,
    pub undo_token: Option<String>,
    pub command_id: String,
    pub action_label: Option<String>,
    pub resource_kind: Option<String>,
    pub resource_id: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub executed_at: OffsetDateTime,
}

/// The response header carrying the operation.
pub const OPERATION_HEADER: &str = "x-om-operation";

impl Operation {
    /// `omop:<encodeURIComponent(JSON)>`, as the reference sends it.
    pub fn header_value(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        format!("omop:{}", encode_uri_component(&json))
    }
}

/// Adds `x-om-operation` to a success response when the logged operation can
/// be undone (the one place every module's write handlers go through).
pub fn with_operation(
    mut builder: actix_web::HttpResponseBuilder,
    op: &Operation,
) -> actix_web::HttpResponseBuilder {
    if op.undo_token.is_some() {
        builder.insert_header((OPERATION_HEADER, op.header_value()));
    }
    builder
}

/// JavaScript's `encodeURIComponent`.
fn encode_uri_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Runs `command` on `conn` (the caller's transaction), asks the actor's write
/// guards, and writes its action-log entry and events there too. Returns the
/// output and the logged operation.
///
/// On a connection outside any transaction, the whole of it runs in one, so a
/// change is never stored without its entry (or after a guard refused it).
pub async fn execute<C: Command>(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    command: C,
) -> Result<(C::Output, Operation), AppError> {
    if in_transaction(conn) {
        execute_in(conn, actor, command).await
    } else {
        conn.transaction(async move |conn| execute_in(conn, actor, command).await)
            .await
    }
}

async fn execute_in<C: Command>(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    command: C,
) -> Result<(C::Output, Operation), AppError> {
    let command_id = command.id();
    let (output, entry) = command.execute(conn, actor).await?;
    check_guards(conn, actor, command_id, Phase::Execute, &entry).await?;
    let operation = record(conn, actor, command_id, entry, None).await?;
    Ok((output, operation))
}

/// Whether `conn` is inside a transaction (the caller's).
pub(crate) fn in_transaction(conn: &mut AsyncPgConnection) -> bool {
    matches!(
        AnsiTransactionManager::transaction_manager_status_mut(conn).transaction_depth(),
        Ok(Some(_))
    )
}

/// Asks the actor's guards about one entry: `Err` (422 `guard_refused`, or
/// the guard's own failure) refuses the write.
pub(crate) async fn check_guards(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    command_id: &str,
    phase: Phase,
    entry: &LogEntry,
) -> Result<(), AppError> {
    if actor.guards.is_empty() {
        return Ok(());
    }
    let input = GuardInput {
        command_id,
        phase,
        actor,
        entry,
    };
    actor.guards.check(conn, &input).await
}

/// One action-log row as the bus writes it, derived from an entry: one-by-one
/// and batch recording both write exactly this.
pub(crate) struct Row {
    tenant_id: Option<Uuid>,
    organization_id: Option<Uuid>,
    command_id: String,
    action_label: Option<String>,
    action_type: &'static str,
    resource_kind: Option<String>,
    resource_id: Option<String>,
    parent_resource_kind: Option<String>,
    parent_resource_id: Option<String>,
    undo_token: Option<String>,
    command_payload: Option<Value>,
    snapshot_before: Option<Value>,
    snapshot_after: Option<Value>,
    changes_json: Value,
    changed_fields: Vec<String>,
    context_json: Option<Value>,
    other_tenant_ids: Vec<Uuid>,
    events: Vec<Event>,
}

impl Row {
    /// The row of `entry`; `context_extra` is merged into the entry's context
    /// (undo/redo traces).
    pub(crate) fn new(
        actor: &Actor,
        command_id: &str,
        entry: LogEntry,
        context_extra: Option<Value>,
    ) -> Self {
        let changes = diff::changes(
            entry.snapshot_before.as_ref(),
            entry.snapshot_after.as_ref(),
        );
        let changed_fields: Vec<String> = changes.keys().cloned().collect();
        let undo_token = entry.undo.as_ref().map(|_| Uuid::new_v4().to_string());
        let context_json = match (entry.context, context_extra) {
            (Some(Value::Object(mut a)), Some(Value::Object(b))) => {
                a.extend(b);
                Some(Value::Object(a))
            }
            (a, b) => b.or(a),
        };
        let command_payload = entry.undo.map(|undo| json!({ "undo": undo }));
        let tenant_id = entry.tenant_id.or(actor.tenant_id);
        let mut other_tenant_ids = entry.other_tenants;
        other_tenant_ids.retain(|t| Some(*t) != tenant_id);
        other_tenant_ids.sort();
        other_tenant_ids.dedup();
        Self {
            tenant_id,
            organization_id: entry.organization_id.or(actor.organization_id),
            command_id: command_id.to_string(),
            action_label: entry.action_label,
            action_type: diff::action_type(command_id),
            resource_kind: entry.resource_kind,
            resource_id: entry.resource_id,
            parent_resource_kind: entry.parent_resource_kind,
            parent_resource_id: entry.parent_resource_id,
            undo_token,
            command_payload,
            snapshot_before: diff::without_secrets(entry.snapshot_before),
            snapshot_after: diff::without_secrets(entry.snapshot_after),
            changes_json: Value::Object(changes),
            changed_fields,
            context_json,
            other_tenant_ids,
            events: entry.events,
        }
    }

    /// The operation clients see for this row, once stored.
    fn operation(self, id: Uuid, executed_at: OffsetDateTime) -> Operation {
        Operation {
            id,
            undo_token: self.undo_token,
            command_id: self.command_id,
            action_label: self.action_label,
            resource_kind: self.resource_kind,
            resource_id: self.resource_id,
            executed_at,
        }
    }
}

/// How the actor is recorded on its rows.
fn source_key(actor: &Actor) -> &'static str {
    if actor.source.is_empty() {
        "api"
    } else {
        actor.source
    }
}

/// Writes one action-log entry (and its events); `context_extra` is merged into
/// the entry's context (undo/redo traces).
pub(crate) async fn record(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    command_id: &str,
    entry: LogEntry,
    context_extra: Option<Value>,
) -> Result<Operation, AppError> {
    let mut row = Row::new(actor, command_id, entry, context_extra);
    let (id, created_at): (Uuid, OffsetDateTime) = diesel::insert_into(action_logs::table)
        .values((
            action_logs::tenant_id.eq(row.tenant_id),
            action_logs::organization_id.eq(row.organization_id),
            action_logs::actor_user_id.eq(actor.user_id),
            action_logs::command_id.eq(&row.command_id),
            action_logs::action_label.eq(&row.action_label),
            action_logs::action_type.eq(row.action_type),
            action_logs::resource_kind.eq(&row.resource_kind),
            action_logs::resource_id.eq(&row.resource_id),
            action_logs::parent_resource_kind.eq(&row.parent_resource_kind),
            action_logs::parent_resource_id.eq(&row.parent_resource_id),
            action_logs::undo_token.eq(&row.undo_token),
            action_logs::command_payload.eq(&row.command_payload),
            action_logs::snapshot_before.eq(&row.snapshot_before),
            action_logs::snapshot_after.eq(&row.snapshot_after),
            action_logs::changes_json.eq(&row.changes_json),
            action_logs::primary_changed_field.eq(<[String]>::first(&row.changed_fields)),
            action_logs::changed_fields.eq(&row.changed_fields),
            action_logs::context_json.eq(&row.context_json),
            action_logs::other_tenant_ids.eq(&row.other_tenant_ids),
            action_logs::actor_is_super_admin.eq(actor.is_super_admin()),
            action_logs::source_key.eq(source_key(actor)),
        ))
        .returning((action_logs::id, action_logs::created_at))
        .get_result(conn)
        .await?;
    for event in std::mem::take(&mut row.events) {
        outbox::enqueue(conn, &event, row.tenant_id).await?;
    }
    Ok(row.operation(id, created_at))
}

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
/// [`StateHandler`] does all of this for [`Tracked`] resources.
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
    interceptors: Vec<Arc<dyn UndoInterceptor>>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_header_is_uri_encoded_json() {
        let op = Operation {
            id: Uuid::nil(),
            undo_token: Some("t".into()),
            command_id: "a.b.update".into(),
            action_label: None,
            resource_kind: Some("a.b".into()),
            resource_id: Some("1".into()),
            executed_at: OffsetDateTime::UNIX_EPOCH,
        };
        let value = op.header_value();
        assert!(value.starts_with("omop:%7B%22id%22%3A%22"), "{value}");
        assert!(!value[5..].contains(['{', '"', ' ', ':']));
    }
}
