//! The bulk jobs record in SQL when no guard applies
//! (`queries::deal_bulk`): each entry and event must be what the Rust
//! recording writes (`deal_entry`, `diff::changes`, the bus's envelope), for
//! deals with every kind of value (quotes, line breaks, non-ASCII text,
//! amounts with and without decimals, timestamps with and without
//! fractions), through single outbox rows and batch rows alike.

use std::collections::HashMap;

use diesel::sql_types::{Array, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_core::command::diff;
use stoa_customers::commands::deals::{BULK_OWNER, BULK_STAGE, deal_entry};
use stoa_customers::model::{DealRow, DealState};
use stoa_customers::queries::deals as q;
use uuid::Uuid;

use super::support::*;

#[derive(diesel::QueryableByName)]
struct LogRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    resource_id: String,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    tenant_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    organization_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    actor_user_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    action_label: Option<String>,
    #[diesel(sql_type = Text)]
    action_type: String,
    #[diesel(sql_type = Nullable<Text>)]
    resource_kind: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    undo_token: Option<String>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    command_payload: Option<Value>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    snapshot_before: Option<Value>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    snapshot_after: Option<Value>,
    #[diesel(sql_type = Jsonb)]
    changes_json: Value,
    #[diesel(sql_type = Array<Text>)]
    changed_fields: Vec<String>,
    #[diesel(sql_type = Nullable<Text>)]
    primary_changed_field: Option<String>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    context_json: Option<Value>,
    #[diesel(sql_type = Array<SqlUuid>)]
    other_tenant_ids: Vec<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    parent_resource_kind: Option<String>,
}

/// The entries of `command`, by deal.
async fn entries(db: &stoa_core::db::Db, command: &str) -> HashMap<Uuid, LogRow> {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(format!(
        "SELECT id, resource_id, tenant_id, organization_id, actor_user_id, action_label, \
         action_type, resource_kind, undo_token, command_payload, snapshot_before, \
         snapshot_after, changes_json, changed_fields, primary_changed_field, context_json, \
         other_tenant_ids, parent_resource_kind FROM action_logs WHERE command_id = '{command}'"
    ))
    .load::<LogRow>(&mut *conn)
    .await
    .unwrap()
    .into_iter()
    .map(|r| (r.resource_id.parse().unwrap(), r))
    .collect()
}

#[derive(diesel::QueryableByName)]
struct OutboxRow {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Jsonb)]
    payload: Value,
    #[diesel(sql_type = Nullable<Text>)]
    batch: Option<String>,
    /// The envelope of a single row, as a batch element shows it.
    #[diesel(sql_type = Jsonb)]
    envelope: Value,
}

/// Every event of the outbox (batches expanded) as a batch element shows
/// it, in the outbox's order.
async fn events(db: &stoa_core::db::Db) -> Vec<Value> {
    let mut conn = db.conn().await.unwrap();
    let rows = diesel::sql_query(
        "SELECT name, payload, batch, jsonb_build_object('tenantId', tenant_id, \
         'organizationId', organization_id, 'actorUserId', actor_user_id, \
         'actorSource', actor_source, 'commandId', command_id, 'actionLogId', action_log_id, \
         'resourceKind', resource_kind, 'resourceId', resource_id) AS envelope \
         FROM event_outbox ORDER BY id",
    )
    .load::<OutboxRow>(&mut *conn)
    .await
    .unwrap();
    let mut out = Vec::new();
    for row in rows {
        match row.batch {
            Some(batch) => {
                let list: Vec<Value> = serde_json::from_str(&batch).unwrap();
                assert_eq!(row.payload, json!({"events": list.len()}));
                for mut event in list {
                    let id = event.as_object_mut().unwrap().remove("eventId").unwrap();
                    assert!(id.as_str().unwrap().parse::<Uuid>().is_ok());
                    out.push(event);
                }
            }
            None => {
                let mut event = row.envelope;
                event["name"] = json!(row.name);
                event["payload"] = row.payload;
                out.push(event);
            }
        }
    }
    out
}

async fn rows(db: &stoa_core::db::Db, tenant: Uuid, ids: &[Uuid]) -> HashMap<Uuid, DealRow> {
    let mut conn = db.conn().await.unwrap();
    let mut out = HashMap::new();
    for id in ids {
        out.insert(*id, q::find(&mut conn, tenant, *id).await.unwrap().unwrap());
    }
    out
}

/// Checks the entries and events of `command` against the Rust recording
/// of each deal going from `before` to `after`.
async fn check_against_rust(
    db: &stoa_core::db::Db,
    command: &str,
    label: &str,
    actor: Uuid,
    before: &HashMap<Uuid, DealRow>,
    after: &HashMap<Uuid, DealRow>,
) {
    let logged = entries(db, command).await;
    assert_eq!(logged.len(), before.len());
    let all_events = events(db).await;
    for (id, old) in before {
        let (b, a) = (DealState::from(old), DealState::from(&after[id]));
        let expected = deal_entry(label, Some(&b), Some(&a));
        let row = &logged[id];
        assert_eq!(row.snapshot_before, expected.snapshot_before, "{id}");
        assert_eq!(row.snapshot_after, expected.snapshot_after, "{id}");
        let changes = diff::changes(
            expected.snapshot_before.as_ref(),
            expected.snapshot_after.as_ref(),
        );
        let fields: Vec<String> = changes.keys().cloned().collect();
        assert!(!fields.is_empty());
        assert_eq!(row.changes_json, Value::Object(changes), "{id}");
        assert_eq!(row.changed_fields, fields, "{id}");
        assert_eq!(
            row.primary_changed_field.as_ref(),
            <[String]>::first(&fields)
        );
        assert_eq!(row.command_payload, Some(json!({"undo": expected.undo})));
        assert!(row.undo_token.is_some());
        assert_eq!(row.action_label.as_deref(), Some(label));
        assert_eq!(row.action_type, diff::action_type(command));
        assert_eq!(row.resource_kind, expected.resource_kind);
        assert_eq!(row.tenant_id, Some(a.tenant_id));
        assert_eq!(row.organization_id, Some(a.organization_id));
        assert_eq!(row.actor_user_id, Some(actor));
        assert_eq!(row.context_json, None);
        assert!(row.other_tenant_ids.is_empty());
        assert_eq!(row.parent_resource_kind, None);
        // Its events, in order, in the bus's envelope.
        let mine: Vec<&Value> = all_events
            .iter()
            .filter(|e| e["actionLogId"] == json!(row.id))
            .collect();
        assert_eq!(mine.len(), expected.events.len(), "{id}");
        for (got, want) in mine.iter().zip(&expected.events) {
            assert_eq!(got["name"], json!(want.name));
            assert_eq!(got["payload"], want.payload, "{id} {}", want.name);
            assert_eq!(got["tenantId"], json!(a.tenant_id));
            assert_eq!(got["organizationId"], json!(a.organization_id));
            assert_eq!(got["actorUserId"], json!(actor));
            assert!(got["actorSource"].is_string());
            assert_eq!(got["commandId"], json!(command));
            assert_eq!(got["resourceKind"], json!("customers.deal"));
            assert_eq!(got["resourceId"], json!(id.to_string()));
        }
    }
}

#[actix_web::test]
async fn entries_recorded_in_sql_are_those_the_rust_recording_writes() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let first = pipeline(&app, &admin, "First").await;
    let lead = stage(&app, &admin, first, "Lead \"hot\" \u{e9}t\u{e9}").await;
    let second = pipeline(&app, &admin, "Second").await;
    let target = stage(&app, &admin, second, "Won \\ back").await;
    // Deals with every kind of value; the demo deals make the job's events
    // more than one outbox row holds singly (a batch row).
    demo_deals(&app.db, &acme, 20).await;
    let odd = [
        json!({"title": "Quotes \"and\" \\ line\nbreaks \u{1f600}", "description": "tab\there",
               "pipelineStageId": lead, "valueAmount": "1250.5", "valueCurrency": "EUR",
               "probability": 40, "ownerUserId": acme.admin, "source": "web"}),
        json!({"title": "Whole amount", "valueAmount": "100", "valueCurrency": "USD",
               "status": "won", "closureOutcome": "won"}),
        json!({"title": "Tiny amount", "valueAmount": "0.0001", "valueCurrency": "PLN",
               "status": "lost", "closureOutcome": "lost", "lossNotes": "price"}),
        json!({"title": "Nothing else"}),
    ];
    for body in odd {
        deal(&app, &admin, body).await;
    }
    sql(
        &app.db,
        "UPDATE customer_deals SET created_at = '2026-01-02 03:04:05.1+00', \
         expected_close_at = '2026-03-01 10:20:30.000120+00' WHERE title = 'Whole amount'",
    )
    .await;
    sql(
        &app.db,
        "UPDATE customer_deals SET created_at = '2026-01-02 03:04:00+00', \
         expected_close_at = '1999-12-31 23:59:59.999999+00' WHERE title = 'Tiny amount'",
    )
    .await;
    let ids = super::bulk::deal_ids(&app.db, acme.tenant_id).await;
    assert_eq!(ids.len(), 24);
    let before_stage = rows(&app.db, acme.tenant_id, &ids).await;

    // The stage job: 24 deals, 48 events (a batch row).
    let res = app
        .send(post_json(
            "/api/customers/deals/bulk-update-stage",
            &admin,
            json!({"ids": ids, "pipelineStageId": target}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert!(workers(&app.db, None).run_one().await.unwrap());
    let done = job(&app, &admin, &res.json()["progressJobId"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["resultSummary"]["affectedCount"], 24);
    let after = rows(&app.db, acme.tenant_id, &ids).await;
    assert!(after.values().all(|d| d.pipeline_stage_id == Some(target)));
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM event_outbox WHERE batch IS NOT NULL"
        )
        .await,
        1
    );
    check_against_rust(
        &app.db,
        BULK_STAGE,
        "Move deal to stage",
        acme.admin,
        &before_stage,
        &after,
    )
    .await;

    // The owner job on three deals: three events, single outbox rows.
    let three: Vec<Uuid> = ids[..3].to_vec();
    let before = rows(&app.db, acme.tenant_id, &three).await;
    let res = app
        .send(post_json(
            "/api/customers/deals/bulk-update-owner",
            &admin,
            json!({"ids": three, "ownerUserId": acme.employee}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert!(workers(&app.db, None).run_one().await.unwrap());
    let after = rows(&app.db, acme.tenant_id, &three).await;
    assert!(
        after
            .values()
            .all(|d| d.owner_user_id == Some(acme.employee))
    );
    check_against_rust(
        &app.db,
        BULK_OWNER,
        "Reassign deal owner",
        acme.admin,
        &before,
        &after,
    )
    .await;

    // Undo of one SQL-recorded entry restores the deal.
    let undo_token = entries(&app.db, BULK_STAGE).await[&ids[5]]
        .undo_token
        .clone()
        .unwrap();
    let res = undo(&app, &admin, &undo_token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let restored = rows(&app.db, acme.tenant_id, &ids[5..6]).await;
    // As the log keeps them: times to the millisecond.
    assert_eq!(
        serde_json::to_value(DealState::from(&restored[&ids[5]])).unwrap(),
        serde_json::to_value(DealState::from(&before_stage[&ids[5]])).unwrap()
    );
}
