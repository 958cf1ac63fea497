//! Events are delivered after commit, never after rollback, and retried.

use std::sync::{Arc, Mutex};

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_core::AppError;
use stoa_core::command::outbox::{Delivered, Dispatcher, Subscriber};
use stoa_core::command::{self, Actor, Command, Event, LogEntry};

use super::support::*;

#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<String>>,
    fail: bool,
}

impl Subscriber for Recorder {
    fn accepts(&self, name: &str) -> bool {
        name.starts_with("test.")
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
                    events: vec![Event {
                        name: self.0.into(),
                        payload: json!({"n": 1}),
                    }],
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
