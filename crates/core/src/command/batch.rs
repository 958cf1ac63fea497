//! Batch recording: many action-log rows and outbox events in one statement
//! per table, for bulk work.
//!
//! Each entry becomes exactly the row one-by-one recording writes
//! ([`Row::new`]); only the statement differs: one
//! `INSERT ... SELECT FROM unnest(...)` with one array per column, whatever the
//! number of rows (no bind limit, and its text never varies, so it stays
//! prepared on the connection). Guards still run for every entry, before
//! anything is written.

use std::collections::HashMap;

use diesel::sql_types::{Array, Bool, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{
    Actor, Command, Event, LogEntry, Operation, Phase, Row, check_guards, in_transaction, outbox,
    source_key,
};
use crate::error::AppError;
use crate::prepared::Cached;

/// Runs `commands` one after the other on `conn`, asks the actor's guards
/// about each entry, then records every entry and its events with one
/// statement per table. All or nothing: the first failure or refusal fails
/// the batch (and, in the caller's transaction, rolls it back). Outputs and
/// operations come in the order of `commands`.
///
/// Outside a transaction, the whole batch runs in one.
pub async fn execute_batch<C: Command>(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    commands: Vec<C>,
) -> Result<Vec<(C::Output, Operation)>, AppError> {
    crate::db::note_write();
    if in_transaction(conn) {
        execute_batch_in(conn, actor, commands).await
    } else {
        conn.transaction(async move |conn| execute_batch_in(conn, actor, commands).await)
            .await
    }
}

async fn execute_batch_in<C: Command>(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    commands: Vec<C>,
) -> Result<Vec<(C::Output, Operation)>, AppError> {
    let mut outputs = Vec::with_capacity(commands.len());
    let mut entries = Vec::with_capacity(commands.len());
    for command in commands {
        let command_id = command.id();
        let (output, entry) = command.execute(conn, actor).await?;
        check_guards(conn, actor, command_id, Phase::Execute, &entry).await?;
        outputs.push(output);
        entries.push((command_id, entry));
    }
    let operations = insert_rows(conn, actor, entries).await?;
    Ok(outputs.into_iter().zip(operations).collect())
}

/// Records `entries` (command id and entry each, for changes the caller made
/// itself, e.g. with one bulk `UPDATE`) as one-by-one recording would, with
/// one statement for the action log and one for the outbox. The actor's guards
/// see every entry first; the first refusal fails the whole batch, so call it
/// in the transaction of the change. Operations come in the order of `entries`.
pub async fn record_batch(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    entries: Vec<(&'static str, LogEntry)>,
) -> Result<Vec<Operation>, AppError> {
    if in_transaction(conn) {
        record_batch_in(conn, actor, entries).await
    } else {
        conn.transaction(async move |conn| record_batch_in(conn, actor, entries).await)
            .await
    }
}

async fn record_batch_in(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    entries: Vec<(&'static str, LogEntry)>,
) -> Result<Vec<Operation>, AppError> {
    for (command_id, entry) in &entries {
        check_guards(conn, actor, command_id, Phase::Execute, entry).await?;
    }
    insert_rows(conn, actor, entries).await
}

#[derive(diesel::QueryableByName)]
struct Inserted {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
}

/// The action log's columns as the batch statement binds them.
const INSERT_ACTION_LOGS: &str = "\
INSERT INTO action_logs (id, tenant_id, organization_id, actor_user_id, command_id, action_label, \
    action_type, resource_kind, resource_id, parent_resource_kind, parent_resource_id, undo_token, \
    command_payload, snapshot_before, snapshot_after, changes_json, changed_fields, \
    primary_changed_field, context_json, other_tenant_ids, actor_is_super_admin, source_key) \
SELECT r.id, r.tenant_id, r.organization_id, $20, r.command_id, r.action_label, \
    r.action_type, r.resource_kind, r.resource_id, r.parent_resource_kind, r.parent_resource_id, \
    r.undo_token, r.command_payload, r.snapshot_before, r.snapshot_after, r.changes_json, \
    r.changed_fields::text[], r.primary_changed_field, r.context_json, \
    r.other_tenant_ids::uuid[], $21, $22 \
FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], \
    $8::text[], $9::text[], $10::text[], $11::text[], $12::jsonb[], $13::jsonb[], $14::jsonb[], \
    $15::jsonb[], $16::text[], $17::text[], $18::jsonb[], $19::text[]) \
    AS r(id, tenant_id, organization_id, command_id, action_label, action_type, resource_kind, \
         resource_id, parent_resource_kind, parent_resource_id, undo_token, command_payload, \
         snapshot_before, snapshot_after, changes_json, changed_fields, primary_changed_field, \
         context_json, other_tenant_ids) \
RETURNING id, created_at";

/// Writes the rows of `entries` and their events: one statement per table.
async fn insert_rows(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    entries: Vec<(&'static str, LogEntry)>,
) -> Result<Vec<Operation>, AppError> {
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let n = entries.len();
    let mut columns = Columns::with_capacity(n);
    let mut events: Vec<(Event, outbox::Envelope)> = Vec::new();
    let mut operations = Vec::with_capacity(n);
    for (command_id, entry) in entries {
        let id = super::pruned::time_ordered_id();
        let mut row = Row::new(actor, command_id, entry, None);
        let envelope = row.envelope(actor, id);
        events.extend(
            std::mem::take(&mut row.events)
                .into_iter()
                .map(|e| (e, envelope.clone())),
        );
        // The timestamp is the database's, filled in below.
        operations.push(Operation {
            id,
            undo_token: row.undo_token.clone(),
            command_id: row.command_id.clone(),
            action_label: row.action_label.clone(),
            resource_kind: row.resource_kind.clone(),
            resource_id: row.resource_id.clone(),
            executed_at: OffsetDateTime::UNIX_EPOCH,
        });
        columns.push(id, row);
    }
    let inserted: Vec<Inserted> = Cached(
        diesel::sql_query(INSERT_ACTION_LOGS)
            .bind::<Array<SqlUuid>, _>(columns.id)
            .bind::<Array<Nullable<SqlUuid>>, _>(columns.tenant_id)
            .bind::<Array<Nullable<SqlUuid>>, _>(columns.organization_id)
            .bind::<Array<Text>, _>(columns.command_id)
            .bind::<Array<Nullable<Text>>, _>(columns.action_label)
            .bind::<Array<Text>, _>(columns.action_type)
            .bind::<Array<Nullable<Text>>, _>(columns.resource_kind)
            .bind::<Array<Nullable<Text>>, _>(columns.resource_id)
            .bind::<Array<Nullable<Text>>, _>(columns.parent_resource_kind)
            .bind::<Array<Nullable<Text>>, _>(columns.parent_resource_id)
            .bind::<Array<Nullable<Text>>, _>(columns.undo_token)
            .bind::<Array<Nullable<Jsonb>>, _>(columns.command_payload)
            .bind::<Array<Nullable<Jsonb>>, _>(columns.snapshot_before)
            .bind::<Array<Nullable<Jsonb>>, _>(columns.snapshot_after)
            .bind::<Array<Jsonb>, _>(columns.changes_json)
            .bind::<Array<Text>, _>(columns.changed_fields)
            .bind::<Array<Nullable<Text>>, _>(columns.primary_changed_field)
            .bind::<Array<Nullable<Jsonb>>, _>(columns.context_json)
            .bind::<Array<Text>, _>(columns.other_tenant_ids)
            .bind::<Nullable<SqlUuid>, _>(actor.user_id)
            .bind::<Bool, _>(actor.is_super_admin())
            .bind::<Text, _>(source_key(actor)),
    )
    .load(conn)
    .await?;
    let created: HashMap<Uuid, OffsetDateTime> =
        inserted.into_iter().map(|r| (r.id, r.created_at)).collect();
    for operation in &mut operations {
        operation.executed_at = created.get(&operation.id).copied().ok_or_else(|| {
            AppError::internal(format!(
                "batch insert returned no row for action log {}",
                operation.id
            ))
        })?;
    }
    outbox::enqueue_many(conn, &events).await?;
    Ok(operations)
}

/// The batch's rows, column by column.
struct Columns {
    id: Vec<Uuid>,
    tenant_id: Vec<Option<Uuid>>,
    organization_id: Vec<Option<Uuid>>,
    command_id: Vec<String>,
    action_label: Vec<Option<String>>,
    action_type: Vec<&'static str>,
    resource_kind: Vec<Option<String>>,
    resource_id: Vec<Option<String>>,
    parent_resource_kind: Vec<Option<String>>,
    parent_resource_id: Vec<Option<String>>,
    undo_token: Vec<Option<String>>,
    command_payload: Vec<Option<Value>>,
    snapshot_before: Vec<Option<Value>>,
    snapshot_after: Vec<Option<Value>>,
    changes_json: Vec<Value>,
    /// Per row an array literal (Postgres arrays cannot be ragged), cast
    /// to `text[]` / `uuid[]` in the statement: a cast per row instead of a
    /// subquery expanding a JSON array (a tenth of the insert's time).
    changed_fields: Vec<String>,
    primary_changed_field: Vec<Option<String>>,
    context_json: Vec<Option<Value>>,
    other_tenant_ids: Vec<String>,
}

impl Columns {
    fn with_capacity(n: usize) -> Self {
        Self {
            id: Vec::with_capacity(n),
            tenant_id: Vec::with_capacity(n),
            organization_id: Vec::with_capacity(n),
            command_id: Vec::with_capacity(n),
            action_label: Vec::with_capacity(n),
            action_type: Vec::with_capacity(n),
            resource_kind: Vec::with_capacity(n),
            resource_id: Vec::with_capacity(n),
            parent_resource_kind: Vec::with_capacity(n),
            parent_resource_id: Vec::with_capacity(n),
            undo_token: Vec::with_capacity(n),
            command_payload: Vec::with_capacity(n),
            snapshot_before: Vec::with_capacity(n),
            snapshot_after: Vec::with_capacity(n),
            changes_json: Vec::with_capacity(n),
            changed_fields: Vec::with_capacity(n),
            primary_changed_field: Vec::with_capacity(n),
            context_json: Vec::with_capacity(n),
            other_tenant_ids: Vec::with_capacity(n),
        }
    }

    fn push(&mut self, id: Uuid, row: Row) {
        self.id.push(id);
        self.tenant_id.push(row.tenant_id);
        self.organization_id.push(row.organization_id);
        self.action_type.push(row.action_type);
        self.resource_kind.push(row.resource_kind);
        self.resource_id.push(row.resource_id);
        self.parent_resource_kind.push(row.parent_resource_kind);
        self.parent_resource_id.push(row.parent_resource_id);
        self.undo_token.push(row.undo_token);
        self.command_id.push(row.command_id);
        self.action_label.push(row.action_label);
        self.command_payload.push(row.command_payload);
        self.snapshot_before.push(row.snapshot_before);
        self.snapshot_after.push(row.snapshot_after);
        self.changes_json.push(row.changes_json);
        self.primary_changed_field
            .push(<[String]>::first(&row.changed_fields).cloned());
        self.changed_fields.push(array_literal(&row.changed_fields));
        self.context_json.push(row.context_json);
        self.other_tenant_ids.push(array_literal(
            row.other_tenant_ids.iter().map(Uuid::to_string),
        ));
    }
}

/// A Postgres array literal of `items`: each element double-quoted, with
/// `\` and `"` escaped, so any text (commas, braces, spaces, `NULL`) reads
/// back as itself.
fn array_literal<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let mut out = String::from("{");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        for c in item.as_ref().chars() {
            if c == '\\' || c == '"' {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::array_literal;

    #[test]
    fn array_literals_quote_every_element() {
        assert_eq!(array_literal(Vec::<String>::new()), "{}");
        assert_eq!(
            array_literal(["title", "a\"b", "c,d", "NULL", "\\x", " {}"]),
            r#"{"title","a\"b","c,d","NULL","\\x"," {}"}"#
        );
    }
}
