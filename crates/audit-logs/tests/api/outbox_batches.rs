//! A write of many events (a bulk job's unit) stores them in batch rows:
//! subscribers still get them one at a time, in order, each in its own
//! envelope; a round is bounded by events, not rows; a subscriber that fails
//! on one event of a batch gets the batch again, alone.

use std::sync::{Arc, Mutex};

use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_core::command::Event;
use stoa_core::command::outbox::{
    BATCH_MAX, BATCH_NAME, Delivered, Dispatcher, Envelope, EventActor, Origin, Origins,
    Subscriber, enqueue_many,
};
use uuid::Uuid;

use super::support::*;

/// Records every delivery; fails its `fail_at`-th call (1-based), once.
struct Counting {
    name: &'static str,
    fail_at: Option<usize>,
    calls: Mutex<Vec<(Uuid, Value)>>,
}

impl Counting {
    fn new(name: &'static str, fail_at: Option<usize>) -> Arc<Self> {
        Arc::new(Self {
            name,
            fail_at,
            calls: Mutex::new(Vec::new()),
        })
    }
    fn calls(&self) -> Vec<(Uuid, Value)> {
        self.calls.lock().unwrap().clone()
    }
}

impl Subscriber for Counting {
    fn id(&self) -> &str {
        self.name
    }
    fn accepts(&self, name: &str) -> bool {
        name.starts_with("bulk.")
    }
    fn origins(&self) -> Origins {
        Origins::Only(&["bulk"])
    }
    fn handle<'a>(&'a self, event: &'a Delivered) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let mut calls = self.calls.lock().unwrap();
            calls.push((event.event_id, event.envelope()));
            if Some(calls.len()) == self.fail_at {
                return Err("down for a moment".into());
            }
            Ok(())
        })
    }
}

#[derive(diesel::QueryableByName, Debug, PartialEq)]
struct RowShape {
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
    #[diesel(sql_type = diesel::sql_types::Int4)]
    event_count: i32,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Uuid>)]
    tenant_id: Option<Uuid>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Uuid>)]
    organization_id: Option<Uuid>,
    #[diesel(sql_type = diesel::sql_types::Text)]
    status: String,
}

async fn rows(db: &stoa_core::db::Db) -> Vec<RowShape> {
    stoa_core::rls::bypass("test", async {
        let mut conn = db.conn().await.unwrap();
        diesel::sql_query(
            "SELECT name, event_count, tenant_id, organization_id, status \
             FROM event_outbox ORDER BY id",
        )
        .load(&mut *conn)
        .await
        .unwrap()
    })
    .await
}

fn envelope(tenant: Uuid, organization: Uuid, i: usize) -> Envelope {
    Envelope {
        origin: Origin::module("bulk"),
        tenant_id: Some(tenant),
        organization_id: Some(organization),
        actor: EventActor {
            user_id: Some(Uuid::from_u128(7)),
            source: Some("api".into()),
        },
        command_id: Some("bulk.things.update".into()),
        action_log_id: Some(Uuid::from_u128(i as u128)),
        resource_kind: Some("bulk.thing".into()),
        resource_id: Some(format!("thing-{i}")),
    }
}

#[actix_web::test]
async fn many_events_travel_in_batch_rows_and_arrive_one_by_one() {
    let app = start().await;
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    let (org_a, org_b) = (Uuid::new_v4(), Uuid::new_v4());
    // 300 events of tenant A (two organizations among the last ones), then
    // 10 of tenant B: rows of A's first 250, A's last 50, and B's 10.
    let mut events = Vec::new();
    for i in 0..300 {
        let org = if i < 290 { org_a } else { org_b };
        events.push((
            Event::new("bulk.thing.updated", json!({"n": i})),
            envelope(a, org, i),
        ));
    }
    for i in 300..310 {
        events.push((
            Event::new("bulk.thing.moved", json!({"n": i})),
            envelope(b, org_b, i),
        ));
    }
    let db = app.db.clone();
    stoa_core::rls::bypass("test", async move {
        let mut conn = db.conn().await.unwrap();
        enqueue_many(&mut conn, &events).await.unwrap();
    })
    .await;
    let shape = |count, tenant, organization| RowShape {
        name: BATCH_NAME.into(),
        event_count: count,
        tenant_id: Some(tenant),
        organization_id: organization,
        status: "pending".into(),
    };
    assert_eq!(BATCH_MAX, 250);
    assert_eq!(
        rows(&app.db).await,
        vec![
            shape(250, a, Some(org_a)),
            // Two organizations in the row: none on the row, each on its event.
            shape(50, a, None),
            shape(10, b, Some(org_b)),
        ]
    );
    // Tests (and anyone reading the table) see every event in order.
    let stored = stoa_core::rls::bypass("test", stoa_testkit::outbox_events(&app.db)).await;
    assert_eq!(stored.len(), 310);
    assert_eq!(stored[299]["payload"], json!({"n": 299}));
    assert_eq!(stored[299]["organizationId"], json!(org_b));
    assert_eq!(stored[300]["name"], "bulk.thing.moved");

    let steady = Counting::new("test.steady", None);
    // Fails at the 100th event it is given: in the first row.
    let flaky = Counting::new("test.flaky", Some(100));
    let mut dispatcher = Dispatcher::new(app.db.clone(), vec![steady.clone(), flaky.clone()]);
    // A round holds up to 100 events plus one row's: the first row alone
    // (250), then the other two (60).
    dispatcher.batch = 100;
    assert_eq!(dispatcher.run_once().await.unwrap(), 250);
    assert_eq!(dispatcher.run_once().await.unwrap(), 60);
    assert_eq!(dispatcher.run_once().await.unwrap(), 0);

    let seen = steady.calls();
    assert_eq!(seen.len(), 310, "each event once, in order");
    for (i, (_, envelope)) in seen.iter().enumerate() {
        assert_eq!(envelope["payload"], json!({"n": i}));
        assert_eq!(envelope["resourceId"], json!(format!("thing-{i}")));
        assert_eq!(
            envelope["actor"],
            json!({"userId": Uuid::from_u128(7), "source": "api"})
        );
    }
    assert_eq!(seen[0].1["tenantId"], json!(a));
    assert_eq!(seen[309].1["tenantId"], json!(b));
    assert_eq!(seen[295].1["organizationId"], json!(org_b));
    let ids: std::collections::HashSet<Uuid> = seen.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), 310, "every event has its own id");
    // The flaky subscriber stopped at its failure; the first row waits.
    assert_eq!(flaky.calls().len(), 100 + 60);
    let states: Vec<String> = rows(&app.db).await.into_iter().map(|r| r.status).collect();
    assert_eq!(states, ["pending", "delivered", "delivered"]);

    // The retry goes to the flaky subscriber alone, from the batch's start,
    // with the same event ids.
    stoa_core::rls::bypass("test", async {
        let mut conn = app.db.conn().await.unwrap();
        diesel::sql_query(
            "UPDATE event_outbox SET next_attempt_at = now() WHERE status = 'pending'",
        )
        .execute(&mut *conn)
        .await
        .unwrap();
    })
    .await;
    assert_eq!(dispatcher.run_once().await.unwrap(), 250);
    assert_eq!(steady.calls().len(), 310);
    let flaky_calls = flaky.calls();
    assert_eq!(flaky_calls.len(), 160 + 250);
    assert_eq!(flaky_calls[160].0, seen[0].0);
    assert_eq!(flaky_calls[409].0, seen[249].0);
    let states: Vec<String> = rows(&app.db).await.into_iter().map(|r| r.status).collect();
    assert_eq!(states, ["delivered", "delivered", "delivered"]);
}

#[actix_web::test]
async fn a_few_events_keep_a_row_each() {
    let app = start().await;
    let events: Vec<_> = (0..3)
        .map(|i| {
            (
                Event::new("bulk.thing.updated", json!({"n": i})),
                Envelope {
                    origin: Origin::module("bulk"),
                    ..Default::default()
                },
            )
        })
        .collect();
    let db = app.db.clone();
    stoa_core::rls::bypass("test", async move {
        let mut conn = db.conn().await.unwrap();
        enqueue_many(&mut conn, &events).await.unwrap();
    })
    .await;
    let names: Vec<String> = rows(&app.db).await.into_iter().map(|r| r.name).collect();
    assert_eq!(names, ["bulk.thing.updated"; 3]);
    let steady = Counting::new("test.steady", None);
    let dispatcher = Dispatcher::new(app.db.clone(), vec![steady.clone()]);
    assert_eq!(dispatcher.run_once().await.unwrap(), 3);
    assert_eq!(steady.calls().len(), 3);
}
