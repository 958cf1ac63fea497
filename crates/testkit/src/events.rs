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
/// the ids and times that differ per run). The events of a batch row (a
/// bulk write's) come one by one, in order, with their row's status.
pub async fn outbox_events(db: &Db) -> Vec<Value> {
    let mut conn = db.conn().await.expect("a connection");
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT event FROM ( \
             SELECT id, 0::bigint AS n, jsonb_build_object('name', name, 'tenantId', tenant_id, \
                 'organizationId', organization_id, \
                 'actor', jsonb_build_object('userId', actor_user_id, 'source', actor_source), \
                 'commandId', command_id, 'resourceKind', resource_kind, \
                 'resourceId', resource_id, 'payload', payload, 'status', status) AS event \
             FROM event_outbox WHERE batch IS NULL \
             UNION ALL \
             SELECT o.id, b.n, jsonb_build_object('name', b.e->'name', \
                 'tenantId', b.e->'tenantId', 'organizationId', b.e->'organizationId', \
                 'actor', jsonb_build_object('userId', b.e->'actorUserId', \
                     'source', b.e->'actorSource'), \
                 'commandId', b.e->'commandId', 'resourceKind', b.e->'resourceKind', \
                 'resourceId', b.e->'resourceId', 'payload', b.e->'payload', \
                 'status', o.status) \
             FROM event_outbox o, jsonb_array_elements(o.batch::jsonb) WITH ORDINALITY AS b(e, n) \
         ) AS events ORDER BY id, n",
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
