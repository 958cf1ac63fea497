//! Events are delivered after commit, never after rollback, and retried;
//! every module's commands emit them in one envelope, and each subscriber
//! has its own delivery state.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_core::AppError;
use stoa_core::command::outbox::{
    Delivered, Dispatcher, Envelope, Origin, Origins, Subscriber, enqueue_many,
};
use stoa_core::command::{self, Actor, Command, Event, LogEntry};
const PASSWORD: &str = "N3w-Passw0rd!";
use serde_json::Value;
use uuid::Uuid;

use super::support::*;

#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<String>>,
    fail: bool,
}

impl Subscriber for Recorder {
    fn id(&self) -> &str {
        if self.fail {
            "test.failing"
        } else {
            "test.recorder"
        }
    }
    fn accepts(&self, name: &str) -> bool {
        name.starts_with("test.")
    }
    /// The test module's own events only (its command is `test.things.create`).
    fn origins(&self) -> Origins {
        Origins::Only(&["test"])
    }
    fn handle<'a>(&'a self, event: &'a Delivered) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            if self.fail {
                return Err("subscriber is down".into());
            }
            self.seen.lock().unwrap().push(event.name.clone());
            Ok(())
        })
    }
}

struct Emit(&'static str);

impl Command for Emit {
    type Output = ();
    fn id(&self) -> &'static str {
        "test.things.create"
    }
    fn execute<'a>(
        self,
        _: &'a mut diesel_async::AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            Ok((
                (),
                LogEntry {
                    resource_kind: Some("test.thing".into()),
                    events: vec![Event::new(self.0, json!({"n": 1}))],
                    ..Default::default()
                },
            ))
        })
    }
}

diesel::table! {
    event_outbox (id) {
        id -> Int8,
        status -> Text,
        attempts -> Int4,
    }
}

#[actix_web::test]
async fn delivery_after_commit_and_none_after_rollback() {
    let app = start().await;
    let actor = Actor::default();
    let a = actor.clone();
    app.db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                command::execute(conn, &a, Emit("test.committed"))
                    .await
                    .map(|_| ())
            })
        })
        .await
        .unwrap();
    let a = actor.clone();
    let rolled_back: Result<(), AppError> = app
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                command::execute(conn, &a, Emit("test.rolled_back")).await?;
                Err(AppError::bad_request("changed my mind"))
            })
        })
        .await;
    assert!(rolled_back.is_err());

    let recorder = Arc::new(Recorder::default());
    let dispatcher = Dispatcher::new(app.db.clone(), vec![recorder.clone()]);
    assert_eq!(dispatcher.run_once().await.unwrap(), 1);
    assert_eq!(
        *recorder.seen.lock().unwrap(),
        vec!["test.committed".to_string()]
    );
    // Delivered events are not delivered again.
    assert_eq!(dispatcher.run_once().await.unwrap(), 0);
    // And the rolled-back command left no action-log entry either.
    let mut conn = app.db.conn().await.unwrap();
    let n: i64 = diesel::dsl::sql::<diesel::sql_types::BigInt>("SELECT count(*) FROM action_logs")
        .get_result(&mut *conn)
        .await
        .unwrap();
    assert_eq!(n, 1);
    // Taken by every subscriber at the first attempt: the event's own row
    // says so, and no per-subscriber delivery rows are written.
    let status: String =
        diesel::dsl::sql::<diesel::sql_types::Text>("SELECT status FROM event_outbox")
            .get_result(&mut *conn)
            .await
            .unwrap();
    assert_eq!(status, "delivered");
    let rows: i64 =
        diesel::dsl::sql::<diesel::sql_types::BigInt>("SELECT count(*) FROM event_deliveries")
            .get_result(&mut *conn)
            .await
            .unwrap();
    assert_eq!(rows, 0);
}

#[actix_web::test]
async fn failed_deliveries_are_retried_then_dead_lettered() {
    let app = start().await;
    let actor = Actor::default();
    app.db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                command::execute(conn, &actor, Emit("test.flaky"))
                    .await
                    .map(|_| ())
            })
        })
        .await
        .unwrap();
    let failing = Arc::new(Recorder {
        fail: true,
        ..Default::default()
    });
    let mut dispatcher = Dispatcher::new(app.db.clone(), vec![failing]);
    dispatcher.max_attempts = 2;
    assert_eq!(dispatcher.run_once().await.unwrap(), 1);
    let mut conn = app.db.conn().await.unwrap();
    let (status, attempts): (String, i32) = event_outbox::table
        .select((event_outbox::status, event_outbox::attempts))
        .first(&mut *conn)
        .await
        .unwrap();
    assert_eq!((status.as_str(), attempts), ("pending", 1));
    // Not due yet (back-off), so nothing is attempted now.
    assert_eq!(dispatcher.run_once().await.unwrap(), 0);
    diesel::sql_query("UPDATE event_outbox SET next_attempt_at = now()")
        .execute(&mut *conn)
        .await
        .unwrap();
    assert_eq!(dispatcher.run_once().await.unwrap(), 1);
    let (status, attempts): (String, i32) = event_outbox::table
        .select((event_outbox::status, event_outbox::attempts))
        .first(&mut *conn)
        .await
        .unwrap();
    assert_eq!((status.as_str(), attempts), ("dead", 2));
    assert_eq!(Dispatcher::backoff(1).as_secs(), 2);
    assert_eq!(Dispatcher::backoff(20).as_secs(), 256);
}

/// Takes every event; fails the first `failures` deliveries of each.
struct Probe {
    name: &'static str,
    failures: usize,
    calls: Mutex<Vec<(Uuid, usize)>>,
    seen: Mutex<Vec<Value>>,
    attempts: AtomicUsize,
}

impl Probe {
    fn new(name: &'static str, failures: usize) -> Arc<Self> {
        Arc::new(Self {
            name,
            failures,
            calls: Mutex::new(Vec::new()),
            seen: Mutex::new(Vec::new()),
            attempts: AtomicUsize::new(0),
        })
    }

    fn deliveries_of(&self, event: Uuid) -> usize {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(e, _)| *e == event)
            .count()
    }
}

impl Subscriber for Probe {
    fn id(&self) -> &str {
        self.name
    }
    fn accepts(&self, name: &str) -> bool {
        !name.starts_with("test.")
    }
    fn origins(&self) -> Origins {
        Origins::Any
    }
    fn handle<'a>(&'a self, event: &'a Delivered) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.attempts.fetch_add(1, Ordering::SeqCst);
            let mut calls = self.calls.lock().unwrap();
            let before = calls.iter().filter(|(e, _)| *e == event.event_id).count();
            calls.push((event.event_id, before + 1));
            if before < self.failures {
                return Err(format!("{} is down", self.name));
            }
            self.seen.lock().unwrap().push(event.envelope());
            Ok(())
        })
    }
}

async fn make_due(db: &stoa_core::db::Db) {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query("UPDATE event_outbox SET next_attempt_at = now() WHERE status = 'pending'")
        .execute(&mut *conn)
        .await
        .unwrap();
}

fn created_id(res: &stoa_testkit::TestResponse) -> Uuid {
    assert!(res.status.is_success(), "{}", res.text());
    res.json()["id"].as_str().unwrap().parse().unwrap()
}

#[actix_web::test]
async fn real_commands_emit_enveloped_events_and_a_failing_subscriber_is_retried_alone() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    {
        // Seeding wrote no events through the bus; start from a clean outbox.
        let mut conn = app.db.conn().await.unwrap();
        diesel::sql_query("DELETE FROM event_outbox")
            .execute(&mut *conn)
            .await
            .unwrap();
    }

    // Real commands of users, roles, ACLs and organizations, through HTTP.
    let (org, _) = create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    let role = created_id(
        &app.send(post_json(
            "/api/auth/roles",
            &admin,
            json!({"name": "Clerks"}),
        ))
        .await,
    );
    let res = app
        .send(put_json(
            "/api/auth/roles/acl",
            &admin,
            json!({"roleId": role, "features": ["auth.users.list"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let user = created_id(
        &app.send(post_json(
            "/api/auth/users",
            &admin,
            json!({"email": "clerk@acme.com", "password": PASSWORD,
                   "organizationId": org, "roles": [role]}),
        ))
        .await,
    );
    let res = app
        .send(put_json(
            "/api/auth/users/acl",
            &admin,
            json!({"userId": user, "features": ["auth.users.list"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(stoa_testkit::requests::delete(
            &format!("/api/auth/users?id={user}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    let ok = Probe::new("test.ok", 0);
    let flaky = Probe::new("test.flaky", 2);
    let mut dispatcher = Dispatcher::new(app.db.clone(), vec![ok.clone(), flaky.clone()]);
    dispatcher.max_attempts = 5;
    let emitted = dispatcher.run_once().await.unwrap();
    assert!(emitted >= 6, "{emitted}");

    // Every event reached the healthy subscriber once, in its envelope.
    let seen = ok.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), emitted);
    let names: BTreeSet<&str> = seen.iter().map(|e| e["name"].as_str().unwrap()).collect();
    for name in [
        "directory.organization.created",
        "auth.role.created",
        "auth.role.acl_updated",
        "auth.user.created",
        "auth.user.acl_updated",
        "auth.user.deleted",
    ] {
        assert!(names.contains(name), "{name} missing from {names:?}");
    }
    let user_created = seen
        .iter()
        .find(|e| e["name"] == "auth.user.created")
        .unwrap();
    assert_eq!(user_created["tenantId"], json!(acme.tenant_id));
    assert!(user_created["organizationId"].is_string(), "{user_created}");
    assert_eq!(
        user_created["actor"],
        json!({"userId": acme.admin, "source": "api"})
    );
    assert_eq!(user_created["commandId"], "auth.users.create");
    assert_eq!(user_created["resourceKind"], "auth.user");
    assert_eq!(user_created["resourceId"], json!(user.to_string()));
    assert_eq!(user_created["payload"], json!({"id": user}));
    assert!(user_created["eventId"].is_string() && user_created["occurredAt"].is_string());
    // The envelope names the action-log entry of the command.
    let entry: Uuid = user_created["actionLogId"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let mut conn = app.db.conn().await.unwrap();
    let command: String = diesel::dsl::sql::<diesel::sql_types::Text>(&format!(
        "SELECT command_id FROM action_logs WHERE id = '{entry}'"
    ))
    .get_result(&mut *conn)
    .await
    .unwrap();
    assert_eq!(command, "auth.users.create");
    let org_created = seen
        .iter()
        .find(|e| e["name"] == "directory.organization.created")
        .unwrap();
    assert_eq!(org_created["resourceId"], json!(org.to_string()));

    // The flaky subscriber failed; retries go to it alone until it succeeds.
    assert!(flaky.seen.lock().unwrap().is_empty());
    for _ in 0..2 {
        make_due(&app.db).await;
        assert_eq!(dispatcher.run_once().await.unwrap(), emitted);
    }
    assert_eq!(flaky.seen.lock().unwrap().len(), emitted);
    let event_ids: Vec<Uuid> = ok.calls.lock().unwrap().iter().map(|(e, _)| *e).collect();
    for event in &event_ids {
        assert_eq!(
            ok.deliveries_of(*event),
            1,
            "never re-delivered to the healthy one"
        );
        assert_eq!(flaky.deliveries_of(*event), 3);
    }
    make_due(&app.db).await;
    assert_eq!(dispatcher.run_once().await.unwrap(), 0, "all delivered");
    let states: Vec<(String, String, i32)> = {
        #[derive(diesel::QueryableByName)]
        struct S {
            #[diesel(sql_type = diesel::sql_types::Text)]
            subscriber: String,
            #[diesel(sql_type = diesel::sql_types::Text)]
            status: String,
            #[diesel(sql_type = diesel::sql_types::Integer)]
            attempts: i32,
        }
        diesel::sql_query(
            "SELECT DISTINCT subscriber, status, attempts FROM event_deliveries ORDER BY subscriber",
        )
        .load::<S>(&mut *conn)
        .await
        .unwrap()
        .into_iter()
        .map(|s| (s.subscriber, s.status, s.attempts))
        .collect()
    };
    assert_eq!(
        states,
        vec![
            ("test.flaky".to_string(), "delivered".to_string(), 3),
            ("test.ok".to_string(), "delivered".to_string(), 1),
        ]
    );
}

#[actix_web::test]
async fn a_subscriber_that_keeps_failing_ends_dead_without_holding_back_the_others() {
    let app = start().await;
    let actor = Actor::default();
    command::execute(
        &mut app.db.conn().await.unwrap(),
        &actor,
        Emit("real.thing"),
    )
    .await
    .unwrap();
    let ok = Probe::new("test.ok", 0);
    let broken = Probe::new("test.broken", usize::MAX);
    let mut dispatcher = Dispatcher::new(app.db.clone(), vec![ok.clone(), broken.clone()]);
    dispatcher.max_attempts = 2;
    assert_eq!(dispatcher.run_once().await.unwrap(), 1);
    make_due(&app.db).await;
    assert_eq!(dispatcher.run_once().await.unwrap(), 1);
    make_due(&app.db).await;
    assert_eq!(dispatcher.run_once().await.unwrap(), 0, "given up");
    assert_eq!(AtomicUsize::load(&ok.attempts, Ordering::SeqCst), 1);
    assert_eq!(AtomicUsize::load(&broken.attempts, Ordering::SeqCst), 2);
    let mut conn = app.db.conn().await.unwrap();
    let (status, attempts): (String, i32) = event_outbox::table
        .select((event_outbox::status, event_outbox::attempts))
        .first(&mut *conn)
        .await
        .unwrap();
    assert_eq!((status.as_str(), attempts), ("dead", 2));
}

/// An event of a subscriber's name written by another module (a business
/// rule's `EMIT_EVENT` named `mail.send`, say) never reaches a subscriber
/// that names its origins, single or in a batch row; the bus's own events of
/// the same name do.
#[actix_web::test]
async fn events_of_untrusted_origins_are_not_delivered() {
    let app = start().await;
    let forged = |n: usize, origin: Origin| -> Vec<(Event, Envelope)> {
        (0..n)
            .map(|i| {
                (
                    Event::new("test.forged", json!({"i": i})),
                    Envelope {
                        origin: origin.clone(),
                        tenant_id: Some(Uuid::from_u128(1)),
                        ..Default::default()
                    },
                )
            })
            .collect()
    };
    let mut conn = app.db.conn().await.unwrap();
    enqueue_many(&mut conn, &forged(1, Origin::module("business_rules")))
        .await
        .unwrap();
    enqueue_many(&mut conn, &forged(1, Origin::default()))
        .await
        .unwrap();
    enqueue_many(&mut conn, &forged(40, Origin::module("business_rules")))
        .await
        .unwrap();
    drop(conn);
    let actor = Actor::default();
    app.db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                command::execute(conn, &actor, Emit("test.genuine"))
                    .await
                    .map(|_| ())
            })
        })
        .await
        .unwrap();
    let recorder = Arc::new(Recorder::default());
    let dispatcher = Dispatcher::new(app.db.clone(), vec![recorder.clone()]);
    while dispatcher.run_once().await.unwrap() > 0 {}
    assert_eq!(
        *recorder.seen.lock().unwrap(),
        vec!["test.genuine".to_string()],
        "only the test module's own event is delivered"
    );
}
