//! The event outbox: events are inserted in the transaction of the change and
//! delivered after commit to in-process subscribers by a [`Dispatcher`] — at
//! least once, with exponential back-off between attempts and a `dead` state
//! after the last one. An event of a rolled-back transaction never exists, so it
//! is never delivered. Subscribers must be idempotent (use `event_id`).

use std::sync::Arc;
use std::time::Duration;

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::Event;
use super::schema::event_outbox;
use crate::db::{Db, DbError};
use crate::prepared::Cached;

/// Writes `event` to the outbox on `conn` (the caller's transaction).
pub async fn enqueue(
    conn: &mut AsyncPgConnection,
    event: &Event,
    tenant_id: Option<Uuid>,
) -> Result<(), diesel::result::Error> {
    diesel::insert_into(event_outbox::table)
        .values((
            event_outbox::name.eq(&event.name),
            event_outbox::payload.eq(&event.payload),
            event_outbox::tenant_id.eq(tenant_id),
        ))
        .execute(conn)
        .await
        .map(|_| ())
}

/// Writes `events` (each with its tenant) to the outbox on `conn` with one
/// statement, in order (ids follow the slice).
pub async fn enqueue_many(
    conn: &mut AsyncPgConnection,
    events: &[(Event, Option<Uuid>)],
) -> Result<(), diesel::result::Error> {
    use diesel::sql_types::{Array, Jsonb, Nullable, Text, Uuid as SqlUuid};
    if events.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = events.iter().map(|(e, _)| e.name.as_str()).collect();
    let payloads: Vec<&Value> = events.iter().map(|(e, _)| &e.payload).collect();
    let tenants: Vec<Option<Uuid>> = events.iter().map(|(_, t)| *t).collect();
    Cached(
        diesel::sql_query(
            "INSERT INTO event_outbox (name, payload, tenant_id) \
             SELECT e.name, e.payload, e.tenant_id \
             FROM unnest($1::text[], $2::jsonb[], $3::uuid[]) WITH ORDINALITY \
                 AS e(name, payload, tenant_id, n) \
             ORDER BY e.n",
        )
        .bind::<Array<Text>, _>(names)
        .bind::<Array<Jsonb>, _>(payloads)
        .bind::<Array<Nullable<SqlUuid>>, _>(tenants),
    )
    .execute(conn)
    .await
    .map(|_| ())
}

/// An event as subscribers receive it.
#[derive(Clone, Debug, Queryable)]
pub struct Delivered {
    pub id: i64,
    /// Stable across retries: the idempotency key.
    pub event_id: Uuid,
    pub name: String,
    pub payload: Value,
    pub tenant_id: Option<Uuid>,
    pub attempts: i32,
}

/// Receives events after commit.
pub trait Subscriber: Send + Sync {
    /// Whether this subscriber wants events named `name`.
    fn accepts(&self, name: &str) -> bool;
    /// Handles one event; an `Err` schedules a retry.
    fn handle<'a>(&'a self, event: &'a Delivered) -> BoxFuture<'a, Result<(), String>>;
}

/// Logs every event (debug level): the default subscriber.
pub struct LogSubscriber;

impl Subscriber for LogSubscriber {
    fn accepts(&self, _: &str) -> bool {
        true
    }
    fn handle<'a>(&'a self, event: &'a Delivered) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            tracing::debug!(event = %event.name, event_id = %event.event_id, "event delivered");
            Ok(())
        })
    }
}

/// Delivers pending outbox events to subscribers.
pub struct Dispatcher {
    db: Db,
    subscribers: Vec<Arc<dyn Subscriber>>,
    /// Attempts before an event is marked `dead` (default 8).
    pub max_attempts: i32,
    /// Events claimed per round (default 100).
    pub batch: i64,
}

impl Dispatcher {
    pub fn new(db: Db, subscribers: Vec<Arc<dyn Subscriber>>) -> Self {
        Self {
            db,
            subscribers,
            max_attempts: 8,
            batch: 100,
        }
    }

    /// Delay before attempt `n + 1`: 1 s, 2 s, 4 s, ... capped at 5 minutes.
    pub fn backoff(attempts: i32) -> Duration {
        Duration::from_secs(1u64 << attempts.clamp(0, 8)).min(Duration::from_secs(300))
    }

    /// Claims due events (skipping rows other dispatchers hold), delivers them
    /// and records the outcome, all in one transaction. Returns how many events
    /// were handled. Every statement stays prepared on its connection (the
    /// claim is a cacheable select; the updates are [`Cached`]), so an idle
    /// poll every 250 ms costs Postgres no parsing or planning.
    pub async fn run_once(&self) -> Result<usize, DbError> {
        let mut conn = self.db.conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        let subscribers = self.subscribers.clone();
        let (max_attempts, batch) = (self.max_attempts, self.batch);
        conn.transaction::<_, DbError, _>(async move |conn| {
            let due: Vec<Delivered> = event_outbox::table
                .filter(event_outbox::status.eq("pending"))
                .filter(event_outbox::next_attempt_at.le(OffsetDateTime::now_utc()))
                .order(event_outbox::id.asc())
                .limit(batch)
                .select((
                    event_outbox::id,
                    event_outbox::event_id,
                    event_outbox::name,
                    event_outbox::payload,
                    event_outbox::tenant_id,
                    event_outbox::attempts,
                ))
                .for_update()
                .skip_locked()
                .load(conn)
                .await?;
            for event in &due {
                let mut failure = None;
                for subscriber in subscribers.iter().filter(|s| s.accepts(&event.name)) {
                    if let Err(err) = subscriber.handle(event).await {
                        failure = Some(err);
                    }
                }
                let row = event_outbox::table.filter(event_outbox::id.eq(event.id));
                match failure {
                    None => {
                        Cached(diesel::update(row).set((
                            event_outbox::status.eq("delivered"),
                            event_outbox::delivered_at.eq(OffsetDateTime::now_utc()),
                            event_outbox::attempts.eq(event.attempts + 1),
                        )))
                        .execute(conn)
                        .await?;
                    }
                    Some(err) => {
                        let attempts = event.attempts + 1;
                        let status = if attempts >= max_attempts { "dead" } else { "pending" };
                        tracing::warn!(event = %event.name, attempts, error = %err, "event delivery failed");
                        Cached(diesel::update(row).set((
                            event_outbox::status.eq(status),
                            event_outbox::attempts.eq(attempts),
                            event_outbox::last_error.eq(err),
                            event_outbox::next_attempt_at
                                .eq(OffsetDateTime::now_utc() + Self::backoff(attempts)),
                        )))
                        .execute(conn)
                        .await?;
                    }
                }
            }
            Ok(due.len())
        })
        .await
    }

    /// Runs forever: a round every `interval`, immediately again while rounds
    /// find work.
    pub async fn run(self: Arc<Self>, interval: Duration) {
        loop {
            match self.run_once().await {
                Ok(n) if n > 0 => continue,
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "outbox dispatch failed"),
            }
            tokio::time::sleep(interval).await;
        }
    }
}
