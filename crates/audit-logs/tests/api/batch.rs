//! Batch recording writes exactly what one-by-one recording writes.

use std::sync::Arc;

use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use stoa_core::AppError;
use stoa_core::command::{self, Actor, Command, Event, LogEntry, Operation, Principal};
use time::OffsetDateTime;
use uuid::Uuid;

use super::support::*;

#[derive(Debug)]
struct SuperAdmin;

impl Principal for SuperAdmin {
    fn is_super_admin(&self) -> bool {
        true
    }
}

/// Returns a prepared entry, as a command that changed nothing else.
struct Replay(&'static str, LogEntry);

impl Command for Replay {
    type Output = &'static str;
    fn id(&self) -> &'static str {
        self.0
    }
    fn execute<'a>(
        self,
        _: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(&'static str, LogEntry), AppError>> {
        Box::pin(async move { Ok((self.0, self.1)) })
    }
}

/// Entries exercising every column: undo payloads, snapshots with nested and
/// secret fields, contexts, parents, tenant/organization overrides, other
/// tenants (unsorted, duplicated, including the own one), events.
fn entries(own: Uuid, other: Uuid, org: Uuid) -> Vec<(&'static str, LogEntry)> {
    let event = |name: &str, n: i32| Event {
        name: name.into(),
        payload: json!({"n": n, "nested": {"list": [1, 2, n]}}),
    };
    vec![
        (
            "test.widgets.create",
            LogEntry {
                action_label: Some("Create widget".into()),
                resource_kind: Some("test.widget".into()),
                resource_id: Some("w1".into()),
                parent_resource_kind: Some("test.board".into()),
                parent_resource_id: Some("b1".into()),
                snapshot_after: Some(json!({"name": "W", "size": 3, "updatedAt": "t1"})),
                undo: Some(json!({"id": "w1", "before": null})),
                events: vec![
                    event("test.widgets.created", 1),
                    event("test.boards.touched", 2),
                ],
                ..Default::default()
            },
        ),
        (
            "test.users.update",
            LogEntry {
                action_label: Some("Update user".into()),
                resource_kind: Some("test.user".into()),
                resource_id: Some("u1".into()),
                snapshot_before: Some(
                    json!({"name": "A", "password": "old-hash", "meta": {"a": 1, "b": [1]}}),
                ),
                snapshot_after: Some(
                    json!({"name": "B", "password": "new-hash", "meta": {"a": 2, "b": [1, 2]}, "zeta": true}),
                ),
                undo: Some(json!({"id": "u1"})),
                context: Some(json!({"reason": "bulk", "items": [1, 2]})),
                tenant_id: Some(own),
                other_tenants: vec![other, own, other],
                events: vec![event("test.users.updated", 3)],
                ..Default::default()
            },
        ),
        (
            "test.widgets.delete",
            LogEntry {
                resource_kind: Some("test.widget".into()),
                resource_id: Some("w2".into()),
                snapshot_before: Some(json!({"name": "Gone"})),
                organization_id: Some(org),
                ..Default::default()
            },
        ),
        ("test.jobs.run", LogEntry::default()),
        (
            "test.roles.assign",
            LogEntry {
                action_label: Some("Assign".into()),
                snapshot_before: Some(json!({"roles": ["a"]})),
                snapshot_after: Some(json!({"roles": ["a"]})),
                context: Some(json!("not an object")),
                tenant_id: Some(other),
                ..Default::default()
            },
        ),
    ]
}

#[derive(QueryableByName)]
struct Doc {
    #[diesel(sql_type = diesel::sql_types::Jsonb)]
    doc: Value,
}

/// The stored action-log rows of `ops`, in their order, as JSON objects.
async fn rows(db: &stoa_core::db::Db, ops: &[Operation]) -> Vec<Map<String, Value>> {
    let ids: Vec<Uuid> = ops.iter().map(|o| o.id).collect();
    let mut conn = db.conn().await.unwrap();
    let docs: Vec<Doc> = diesel::sql_query(
        "SELECT to_jsonb(a) AS doc FROM action_logs a WHERE id = ANY($1) \
         ORDER BY array_position($1, a.id)",
    )
    .bind::<diesel::sql_types::Array<diesel::sql_types::Uuid>, _>(&ids)
    .load(&mut *conn)
    .await
    .unwrap();
    assert_eq!(docs.len(), ops.len());
    docs.into_iter()
        .map(|d| match d.doc {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        })
        .collect()
}

/// Compares two rows column by column, except what is unique per row (id,
/// undo token) or per transaction (timestamps).
fn assert_same_row(one: &Map<String, Value>, other: &Map<String, Value>, what: &str) {
    assert_eq!(one.len(), other.len());
    assert!(one.len() >= 25, "every column is compared: {one:?}");
    for (column, value) in one {
        match column.as_str() {
            "id" | "created_at" | "updated_at" => {}
            "undo_token" => assert_eq!(
                value.is_null(),
                other[column].is_null(),
                "{what}: undo_token"
            ),
            _ => assert_eq!(value, &other[column], "{what}: column {column}"),
        }
    }
}

async fn outbox(db: &stoa_core::db::Db) -> Vec<Map<String, Value>> {
    let mut conn = db.conn().await.unwrap();
    let docs: Vec<Doc> = diesel::sql_query(
        "SELECT to_jsonb(e) - 'id' - 'event_id' - 'created_at' - 'next_attempt_at' \
             - 'action_log_id' AS doc \
         FROM event_outbox e ORDER BY id",
    )
    .load(&mut *conn)
    .await
    .unwrap();
    docs.into_iter()
        .map(|d| d.doc.as_object().unwrap().clone())
        .collect()
}

#[actix_web::test]
async fn batch_content_equals_one_by_one_content() {
    let app = start().await;
    let (own, other, org, user) = (
        Uuid::new_v4(),
        Uuid::new_v4(),
        Uuid::new_v4(),
        Uuid::new_v4(),
    );
    let actor = Actor::api(Some(user), Some(own), Some(Uuid::new_v4()))
        .with_principal(Arc::new(SuperAdmin));

    // One by one: each entry through `execute`, in one transaction.
    let a = actor.clone();
    let list = entries(own, other, org);
    let one_by_one: Vec<Operation> = app
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let mut ops = Vec::new();
                for (id, entry) in list {
                    ops.push(command::execute(conn, &a, Replay(id, entry)).await?.1);
                }
                Ok(ops)
            })
        })
        .await
        .unwrap();
    // Recorded in a batch.
    let a = actor.clone();
    let list = entries(own, other, org);
    let recorded: Vec<Operation> = app
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move { command::record_batch(conn, &a, list).await })
        })
        .await
        .unwrap();
    // Executed in a batch.
    let a = actor.clone();
    let commands: Vec<Replay> = entries(own, other, org)
        .into_iter()
        .map(|(id, e)| Replay(id, e))
        .collect();
    let executed: Vec<(&'static str, Operation)> = app
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move { command::execute_batch(conn, &a, commands).await })
        })
        .await
        .unwrap();
    let outputs: Vec<&str> = executed.iter().map(|(o, _)| *o).collect();
    let executed: Vec<Operation> = executed.into_iter().map(|(_, op)| op).collect();
    let expected: Vec<&str> = entries(own, other, org).iter().map(|(id, _)| *id).collect();
    assert_eq!(
        outputs, expected,
        "outputs come in the order of the commands"
    );

    let single = rows(&app.db, &one_by_one).await;
    for (name, ops) in [("record_batch", &recorded), ("execute_batch", &executed)] {
        let batch = rows(&app.db, ops).await;
        for (i, (a, b)) in single.iter().zip(&batch).enumerate() {
            assert_same_row(a, b, &format!("{name} entry {i}"));
        }
        // The operations clients see match too.
        for (a, b) in one_by_one.iter().zip(ops.iter()) {
            assert_eq!(a.command_id, b.command_id);
            assert_eq!(a.action_label, b.action_label);
            assert_eq!(a.resource_kind, b.resource_kind);
            assert_eq!(a.resource_id, b.resource_id);
            assert_eq!(a.undo_token.is_some(), b.undo_token.is_some());
            assert_ne!(b.executed_at, OffsetDateTime::UNIX_EPOCH);
        }
        for (op, row) in ops.iter().zip(&batch) {
            assert_eq!(row["undo_token"], json!(op.undo_token), "{name}");
            assert_eq!(row["id"], json!(op.id), "{name}");
        }
    }
    // Spot checks that the compared content is the real thing, not all nulls.
    assert_eq!(single[0]["tenant_id"], json!(own));
    assert_eq!(single[0]["actor_user_id"], json!(user));
    assert_eq!(single[0]["actor_is_super_admin"], json!(true));
    assert_eq!(single[0]["parent_resource_id"], json!("b1"));
    assert_eq!(
        single[1]["changed_fields"],
        json!(["meta.a", "meta.b", "name", "password", "zeta"])
    );
    assert_eq!(single[1]["primary_changed_field"], json!("meta.a"));
    assert_eq!(single[1]["other_tenant_ids"], json!([other]));
    assert_eq!(single[1]["snapshot_after"].get("password"), None);
    assert_eq!(single[1]["changes_json"]["password"]["to"], "[redacted]");
    assert_eq!(single[2]["organization_id"], json!(org));
    assert_eq!(single[2]["action_type"], "delete");
    assert_eq!(single[4]["tenant_id"], json!(other));
    assert_eq!(single[4]["context_json"], json!("not an object"));
    let tokens: std::collections::HashSet<_> = one_by_one
        .iter()
        .chain(&recorded)
        .chain(&executed)
        .filter_map(|o| o.undo_token.clone())
        .collect();
    assert_eq!(tokens.len(), 6, "undo tokens are unique per entry");

    // Events: the same rows, in the same order, for each of the three runs.
    let events = outbox(&app.db).await;
    assert_eq!(events.len(), 9);
    let (first, rest) = events.split_at(3);
    let (second, third) = rest.split_at(3);
    assert_eq!(first, second);
    assert_eq!(first, third);
    assert_eq!(first[0]["name"], "test.widgets.created");
    assert_eq!(first[1]["name"], "test.boards.touched");
    assert_eq!(first[2]["tenant_id"], json!(own));
    assert_eq!(first[2]["payload"]["nested"]["list"], json!([1, 2, 3]));
}

#[actix_web::test]
async fn an_empty_batch_writes_nothing() {
    let app = start().await;
    let mut conn = app.db.conn().await.unwrap();
    let ops = command::record_batch(&mut conn, &Actor::default(), Vec::new())
        .await
        .unwrap();
    assert!(ops.is_empty());
    let none: Vec<Replay> = Vec::new();
    assert!(
        command::execute_batch(&mut conn, &Actor::default(), none)
            .await
            .unwrap()
            .is_empty()
    );
    drop(conn);
    assert!(outbox(&app.db).await.is_empty());
}
