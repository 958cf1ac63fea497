//! Reading the event outbox in tests: every event in its envelope.

use diesel_async::RunQueryDsl;
use serde_json::Value;
use stoa_core::db::Db;

#[derive(diesel::QueryableByName)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::Jsonb)]
    event: Value,
}

/// Every event in the outbox, oldest first, as `{name, tenantId,
/// organizationId, actor: {userId, source}, commandId, resourceKind,
/// resourceId, payload, status}` (the envelope subscribers get, without
/// the ids and times that differ per run).
pub async fn outbox_events(db: &Db) -> Vec<Value> {
    let mut conn = db.conn().await.expect("a connection");
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT jsonb_build_object('name', name, 'tenantId', tenant_id, \
             'organizationId', organization_id, \
             'actor', jsonb_build_object('userId', actor_user_id, 'source', actor_source), \
             'commandId', command_id, 'resourceKind', resource_kind, \
             'resourceId', resource_id, 'payload', payload, 'status', status) AS event \
         FROM event_outbox ORDER BY id",
    )
    .load(&mut *conn)
    .await
    .expect("read the outbox");
    rows.into_iter().map(|r| r.event).collect()
}

/// The events named `name`.
pub async fn outbox_events_named(db: &Db, name: &str) -> Vec<Value> {
    outbox_events(db)
        .await
        .into_iter()
        .filter(|e| e["name"] == name)
        .collect()
}
