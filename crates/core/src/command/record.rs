//! Recording one command: run it, ask the write guards, and write its
//! action-log row and outbox events in the caller's transaction.

use diesel::prelude::*;
use diesel_async::{
    AnsiTransactionManager, AsyncConnection, AsyncPgConnection, RunQueryDsl, TransactionManager,
};
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use super::guard::GuardLog;
use super::schema::action_logs;
use super::{Actor, Command, Event, GuardInput, LogEntry, Operation, Phase, diff, outbox, pruned};
use crate::error::AppError;

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
    // The request's later reads must see this write (crate::db::Db::reader).
    crate::db::note_write();
    if in_transaction(conn) {
        execute_in(conn, actor, command).await
    } else {
        conn.transaction(async move |conn| execute_in(conn, actor, command).await)
            .await
    }
}

/// [`execute`] on a connection of `db`'s pool: `command` in a transaction
/// of its own.
pub async fn run<C: Command>(
    db: &crate::db::Db,
    actor: &Actor,
    command: C,
) -> Result<(C::Output, Operation), AppError> {
    let mut conn = db.conn().await?;
    execute(&mut conn, actor, command).await
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
    let log = GuardLog::default();
    let input = GuardInput::new(command_id, phase, actor, entry, &log);
    actor.guards.check(conn, &input).await
}

/// One action-log row as the bus writes it, derived from an entry: one-by-one
/// and batch recording both write exactly this.
pub(crate) struct Row {
    pub(crate) tenant_id: Option<Uuid>,
    pub(crate) organization_id: Option<Uuid>,
    pub(crate) command_id: String,
    pub(crate) action_label: Option<String>,
    pub(crate) action_type: &'static str,
    pub(crate) resource_kind: Option<String>,
    pub(crate) resource_id: Option<String>,
    pub(crate) parent_resource_kind: Option<String>,
    pub(crate) parent_resource_id: Option<String>,
    pub(crate) undo_token: Option<String>,
    pub(crate) command_payload: Option<Value>,
    pub(crate) snapshot_before: Option<Value>,
    pub(crate) snapshot_after: Option<Value>,
    pub(crate) changes_json: Value,
    pub(crate) changed_fields: Vec<String>,
    pub(crate) context_json: Option<Value>,
    pub(crate) other_tenant_ids: Vec<Uuid>,
    pub(crate) events: Vec<Event>,
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
        let undo_token = entry
            .undo
            .as_ref()
            .map(|_| pruned::time_ordered_id().to_string());
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

    /// The envelope of this row's events (entry `action_log_id`).
    pub(crate) fn envelope(&self, actor: &Actor, action_log_id: Uuid) -> outbox::Envelope {
        outbox::Envelope {
            origin: outbox::Origin::of_command(&self.command_id),
            tenant_id: self.tenant_id,
            organization_id: self.organization_id,
            actor: outbox::EventActor {
                user_id: actor.user_id,
                source: Some(source_key(actor).to_string()),
            },
            command_id: Some(self.command_id.clone()),
            action_log_id: Some(action_log_id),
            resource_kind: self.resource_kind.clone(),
            resource_id: self.resource_id.clone(),
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
pub(crate) fn source_key(actor: &Actor) -> &'static str {
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
            action_logs::id.eq(pruned::time_ordered_id()),
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
    let events: Vec<(Event, outbox::Envelope)> = std::mem::take(&mut row.events)
        .into_iter()
        .map(|event| (event, row.envelope(actor, id)))
        .collect();
    outbox::enqueue_many(conn, &events).await?;
    Ok(row.operation(id, created_at))
}
