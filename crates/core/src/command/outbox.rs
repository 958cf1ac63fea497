//! The event outbox: events are inserted in the transaction of the change and
//! delivered after commit to in-process subscribers by a [`Dispatcher`] — at
//! least once, with exponential back-off between attempts and a `dead` state
//! after the last one. An event of a rolled-back transaction never exists, so it
//! is never delivered. Subscribers must be idempotent (use `event_id`).
//!
//! Every event travels in one envelope ([`Delivered::envelope`]): `{eventId,
//! name, tenantId, organizationId, actor: {userId, source}, commandId,
//! actionLogId, resourceKind, resourceId, payload, occurredAt}`. The command
//! bus fills it from the command's action-log entry, so a module only names
//! its events and gives their payload ([`super::Event::new`]).
//!
//! Delivery happens outside any transaction: a dispatcher claims due events
//! with one statement that leases them ([`Dispatcher::lease`]) and commits,
//! then hands each event to every subscriber that accepts it. An event that
//! one of them failed gets each subscriber's outcome on its own row
//! (`event_deliveries`, keyed by [`Subscriber::id`]), so a retry goes only to
//! the subscribers that have not had the event yet: one failing subscriber
//! never re-delivers to the others. An event every subscriber took at the
//! first attempt needs no such rows: its own status says `delivered`.
//! The outcomes of a round are written together, in one statement
//! ([`RECORD_ROUND`]): a burst of 100,000 events (a bulk job) costs a commit
//! per round of [`Dispatcher::batch`] events, not two or three per event,
//! which left the database's disk busy for minutes behind the job. A
//! dispatcher that dies mid-round leaves its round to the lease (delivered
//! again: at least once, as before).
//! A slow subscriber holds no database lock or connection meanwhile; one that
//! outlasts the lease may see the event again from another dispatcher
//! (at least once).
//!
//! A write of more than [`BATCH_FROM`] events (a bulk job's unit) stores
//! them in batch rows of up to [`BATCH_MAX`] events of one tenant: every
//! row is written three times by non-HOT updates, so single rows made the
//! outbox a third of the database's work in the bulk benchmark. The
//! dispatcher expands a batch and gives its events to each subscriber one at
//! a time, in order; delivery state stays per row, so a subscriber that
//! fails on one event of a batch gets the whole batch again (the others do
//! not).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{
    Array, BigInt, Double, Int4, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid,
};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use super::Event;
use crate::db::{Db, DbError};
use crate::prepared::Cached;

/// Who did it, as events carry it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventActor {
    pub user_id: Option<Uuid>,
    /// `api`, `ui` or `system` (`None` for events written outside the bus).
    pub source: Option<String>,
}

/// The module that wrote an event, set by the server and never by data: the
/// command bus takes it from the command's id
/// (`attachments.attachments.delete` → `attachments`), and every other
/// writer names its own module as a constant ([`Origin::module`] takes a
/// `&'static str`). A business rule's `EMIT_EVENT` is written with origin
/// `business_rules` whatever name it was configured with, so a subscriber
/// that expects `mail` or `attachments` events ([`Subscriber::origins`])
/// never acts on it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Origin(Cow<'static, str>);

impl Origin {
    /// The origin of events written by module `name` outside the bus.
    pub const fn module(name: &'static str) -> Self {
        Self(Cow::Borrowed(name))
    }

    /// The origin of a command's events: its module, the id's first segment.
    pub(crate) fn of_command(command_id: &str) -> Self {
        let module = command_id.split('.').next().unwrap_or_default();
        Self(Cow::Owned(module.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Which origins' events a subscriber acts on ([`Subscriber::origins`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origins {
    /// Every origin: for subscribers that only observe (logging, rules
    /// watching domain events, which check the owner themselves).
    Any,
    /// Only events written by these modules.
    Only(&'static [&'static str]),
}

impl Origins {
    pub fn allows(&self, origin: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Only(list) => list.contains(&origin),
        }
    }
}

/// The envelope fields of an event besides its name and payload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Envelope {
    /// The module that wrote it ([`Origin`]); the default (empty) origin is
    /// trusted by no subscriber that names its origins.
    pub origin: Origin,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub actor: EventActor,
    /// The command that emitted it (`directory.organizations.create`).
    pub command_id: Option<String>,
    /// The action-log entry of that command.
    pub action_log_id: Option<Uuid>,
    pub resource_kind: Option<String>,
    pub resource_id: Option<String>,
}

const INSERT_EVENTS: &str = "INSERT INTO event_outbox (name, payload, tenant_id, organization_id, \
         actor_user_id, actor_source, command_id, action_log_id, resource_kind, resource_id, \
         origin) \
     SELECT e.name, e.payload, e.tenant_id, e.organization_id, e.actor_user_id, e.actor_source, \
         e.command_id, e.action_log_id, e.resource_kind, e.resource_id, e.origin \
     FROM unnest($1::text[], $2::jsonb[], $3::uuid[], $4::uuid[], $5::uuid[], $6::text[], \
         $7::text[], $8::uuid[], $9::text[], $10::text[], $11::text[]) WITH ORDINALITY \
         AS e(name, payload, tenant_id, organization_id, actor_user_id, actor_source, \
              command_id, action_log_id, resource_kind, resource_id, origin, n) \
     ORDER BY e.n";

/// Writes `event` in its envelope to the outbox on `conn` (the caller's
/// transaction). Work outside the command bus that emits events (the job
/// queue) fills the envelope itself.
pub async fn enqueue(
    conn: &mut AsyncPgConnection,
    event: &Event,
    envelope: &Envelope,
) -> Result<(), diesel::result::Error> {
    enqueue_many(conn, &[(event.clone(), envelope.clone())]).await
}

/// A write of more events than this stores them in batch rows.
pub const BATCH_FROM: usize = 32;
/// Most events in one batch row.
pub const BATCH_MAX: usize = 250;
/// The name of a batch row (its events keep their own names).
pub const BATCH_NAME: &str = "core.event_batch";

const INSERT_BATCHES: &str = "INSERT INTO event_outbox (name, payload, tenant_id, organization_id, \
         batch, event_count, origin) \
     SELECT $1, jsonb_build_object('events', b.event_count), b.tenant_id, b.organization_id, \
         b.batch, b.event_count, b.origin \
     FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::int4[], $6::text[]) WITH ORDINALITY \
         AS b(tenant_id, organization_id, batch, event_count, origin, n) \
     ORDER BY b.n";

/// Writes `events` (each in its envelope) to the outbox on `conn` with one
/// statement, in order (ids follow the slice). More than [`BATCH_FROM`]
/// events go into batch rows of up to [`BATCH_MAX`], one tenant each: a
/// bulk job's unit writes a few rows instead of hundreds (see the
/// migration `core_outbox_event_batches`); subscribers see no difference.
pub async fn enqueue_many(
    conn: &mut AsyncPgConnection,
    events: &[(Event, Envelope)],
) -> Result<(), diesel::result::Error> {
    if events.is_empty() {
        return Ok(());
    }
    if events.len() > BATCH_FROM {
        return enqueue_batches(conn, events).await;
    }
    let column = |f: fn(&(Event, Envelope)) -> Option<Uuid>| -> Vec<Option<Uuid>> {
        events.iter().map(f).collect()
    };
    let text = |f: fn(&(Event, Envelope)) -> Option<String>| -> Vec<Option<String>> {
        events.iter().map(f).collect()
    };
    Cached(
        diesel::sql_query(INSERT_EVENTS)
            .bind::<Array<Text>, _>(
                events
                    .iter()
                    .map(|(e, _)| e.name.as_str())
                    .collect::<Vec<_>>(),
            )
            .bind::<Array<Jsonb>, _>(events.iter().map(|(e, _)| &e.payload).collect::<Vec<_>>())
            .bind::<Array<Nullable<SqlUuid>>, _>(column(|(_, v)| v.tenant_id))
            .bind::<Array<Nullable<SqlUuid>>, _>(column(|(_, v)| v.organization_id))
            .bind::<Array<Nullable<SqlUuid>>, _>(column(|(_, v)| v.actor.user_id))
            .bind::<Array<Nullable<Text>>, _>(text(|(_, v)| v.actor.source.clone()))
            .bind::<Array<Nullable<Text>>, _>(text(|(_, v)| v.command_id.clone()))
            .bind::<Array<Nullable<SqlUuid>>, _>(column(|(_, v)| v.action_log_id))
            .bind::<Array<Nullable<Text>>, _>(text(|(_, v)| v.resource_kind.clone()))
            .bind::<Array<Nullable<Text>>, _>(text(|(_, v)| v.resource_id.clone()))
            .bind::<Array<Text>, _>(
                events
                    .iter()
                    .map(|(_, v)| v.origin.as_str())
                    .collect::<Vec<_>>(),
            ),
    )
    .execute(conn)
    .await
    .map(|_| ())
}

/// Events of one tenant and one origin (a batch row's origin is its
/// events') in chunks of at most [`BATCH_MAX`], in order.
fn batches(events: &[(Event, Envelope)]) -> Vec<&[(Event, Envelope)]> {
    let mut out = Vec::new();
    let mut rest = events;
    while let Some((first, _)) = rest.split_first() {
        let (tenant, origin) = (first.1.tenant_id, &first.1.origin);
        let len = rest
            .iter()
            .take(BATCH_MAX)
            .take_while(|(_, v)| v.tenant_id == tenant && v.origin == *origin)
            .count();
        let (chunk, tail) = rest.split_at(len);
        out.push(chunk);
        rest = tail;
    }
    out
}

/// One event of a batch row, as stored in its `batch` array: written
/// borrowed from the events (`BatchedEvent<&str, &Value>`, serialized
/// straight to the statement's text: no `Value` tree, no copies, and a bulk
/// job's unit writes hundreds) and read owned (`BatchedEvent<String, Value>`).
#[derive(serde::Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct BatchedEvent<S, P> {
    event_id: Uuid,
    name: S,
    payload: P,
    tenant_id: Option<Uuid>,
    organization_id: Option<Uuid>,
    actor_user_id: Option<Uuid>,
    actor_source: Option<S>,
    command_id: Option<S>,
    action_log_id: Option<Uuid>,
    resource_kind: Option<S>,
    resource_id: Option<S>,
}

async fn enqueue_batches(
    conn: &mut AsyncPgConnection,
    events: &[(Event, Envelope)],
) -> Result<(), diesel::result::Error> {
    let chunks = batches(events);
    let mut tenants = Vec::with_capacity(chunks.len());
    let mut organizations = Vec::with_capacity(chunks.len());
    let mut arrays = Vec::with_capacity(chunks.len());
    let mut counts = Vec::with_capacity(chunks.len());
    let mut origins = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        origins.push(chunk[0].1.origin.as_str());
        let organization = chunk[0].1.organization_id;
        tenants.push(chunk[0].1.tenant_id);
        organizations.push(
            chunk
                .iter()
                .all(|(_, v)| v.organization_id == organization)
                .then_some(organization)
                .flatten(),
        );
        let list: Vec<BatchedEvent<&str, &Value>> = chunk
            .iter()
            .map(|(e, v)| BatchedEvent {
                event_id: Uuid::new_v4(),
                name: e.name.as_str(),
                payload: &e.payload,
                tenant_id: v.tenant_id,
                organization_id: v.organization_id,
                actor_user_id: v.actor.user_id,
                actor_source: v.actor.source.as_deref(),
                command_id: v.command_id.as_deref(),
                action_log_id: v.action_log_id,
                resource_kind: v.resource_kind.as_deref(),
                resource_id: v.resource_id.as_deref(),
            })
            .collect();
        arrays.push(
            serde_json::to_string(&list)
                .map_err(|e| diesel::result::Error::SerializationError(Box::new(e)))?,
        );
        counts.push(i32::try_from(chunk.len()).unwrap_or(i32::MAX));
    }
    Cached(
        diesel::sql_query(INSERT_BATCHES)
            .bind::<Text, _>(BATCH_NAME)
            .bind::<Array<Nullable<SqlUuid>>, _>(tenants)
            .bind::<Array<Nullable<SqlUuid>>, _>(organizations)
            .bind::<Array<Text>, _>(arrays)
            .bind::<Array<Int4>, _>(counts)
            .bind::<Array<Text>, _>(origins),
    )
    .execute(conn)
    .await
    .map(|_| ())
}

/// A claimed outbox row: one event, or a batch of them.
#[derive(diesel::QueryableByName)]
struct Claimed {
    #[diesel(embed)]
    event: Delivered,
    /// The batch's JSON text: read straight into the events, without a
    /// `Value` tree of the whole array first.
    #[diesel(sql_type = Nullable<Text>)]
    batch: Option<String>,
}

impl Claimed {
    /// The row's events, in order (an error names what is malformed).
    fn events(self) -> Result<Vec<Delivered>, String> {
        let Some(batch) = self.batch else {
            return Ok(vec![self.event]);
        };
        let row = self.event;
        let list: Vec<BatchedEvent<String, Value>> = serde_json::from_str(&batch)
            .map_err(|e| format!("malformed event batch {}: {e}", row.id))?;
        Ok(list
            .into_iter()
            .map(|e| Delivered {
                id: row.id,
                event_id: e.event_id,
                name: e.name,
                payload: e.payload,
                tenant_id: e.tenant_id,
                organization_id: e.organization_id,
                actor_user_id: e.actor_user_id,
                actor_source: e.actor_source,
                command_id: e.command_id,
                action_log_id: e.action_log_id,
                resource_kind: e.resource_kind,
                resource_id: e.resource_id,
                origin: row.origin.clone(),
                created_at: row.created_at,
                attempts: row.attempts,
            })
            .collect())
    }
}

/// An event as subscribers receive it.
#[derive(Clone, Debug, diesel::QueryableByName)]
pub struct Delivered {
    /// The outbox row (shared by the events of a batch row).
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    /// Stable across retries: the idempotency key.
    #[diesel(sql_type = SqlUuid)]
    pub event_id: Uuid,
    #[diesel(sql_type = Text)]
    pub name: String,
    #[diesel(sql_type = Jsonb)]
    pub payload: Value,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub tenant_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub organization_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub actor_user_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    pub actor_source: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub command_id: Option<String>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub action_log_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    pub resource_kind: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub resource_id: Option<String>,
    /// The module that wrote it ([`Origin`]; a batch row's events share it).
    #[diesel(sql_type = Text)]
    pub origin: String,
    #[diesel(sql_type = Timestamptz)]
    pub created_at: OffsetDateTime,
    /// Rounds this event was offered in before this one.
    #[diesel(sql_type = Int4)]
    pub attempts: i32,
}

impl Delivered {
    /// The actor of the envelope.
    pub fn actor(&self) -> EventActor {
        EventActor {
            user_id: self.actor_user_id,
            source: self.actor_source.clone(),
        }
    }

    /// The event in its envelope, as JSON (what a webhook or a rules engine
    /// is given).
    pub fn envelope(&self) -> Value {
        json!({
            "eventId": self.event_id,
            "name": self.name,
            "tenantId": self.tenant_id,
            "organizationId": self.organization_id,
            "actor": self.actor(),
            "commandId": self.command_id,
            "actionLogId": self.action_log_id,
            "resourceKind": self.resource_kind,
            "resourceId": self.resource_id,
            "payload": self.payload,
            "occurredAt": crate::serde_util::timestamp::format(self.created_at),
        })
    }
}

/// Receives events after commit.
pub trait Subscriber: Send + Sync {
    /// A stable name (`webhooks.deliver`): the key of this subscriber's
    /// delivery state, so it must not change between releases and must
    /// differ between subscribers.
    fn id(&self) -> &str;
    /// Whether this subscriber wants events named `name`.
    fn accepts(&self, name: &str) -> bool;
    /// The origins whose events it acts on ([`Origin`]): a subscriber with
    /// effects (sending mail, deleting files) names the modules that write
    /// its events, so an event of the same name written by anyone else (a
    /// business rule's `EMIT_EVENT`) never reaches it. Required, so that no
    /// subscriber trusts every writer by default.
    fn origins(&self) -> Origins;
    /// Handles one event; an `Err` schedules a retry (for this subscriber only).
    fn handle<'a>(&'a self, event: &'a Delivered) -> BoxFuture<'a, Result<(), String>>;
}

/// Logs every event (debug level): the default subscriber.
pub struct LogSubscriber;

impl Subscriber for LogSubscriber {
    fn id(&self) -> &str {
        "core.log"
    }
    fn accepts(&self, _: &str) -> bool {
        true
    }
    fn origins(&self) -> Origins {
        Origins::Any
    }
    fn handle<'a>(&'a self, event: &'a Delivered) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            tracing::debug!(event = %event.name, event_id = %event.event_id, "event delivered");
            Ok(())
        })
    }
}

/// Claims due rows holding up to `$1` events (at least one row, however
/// large) and leases them for `$2` seconds, in one statement that commits
/// at once: other dispatchers skip them until the lease ends (a dispatcher
/// that died mid-delivery leaves them to others). The candidates are read
/// in the partial index's order (`event_outbox_pending`: due time, then
/// id), so a claim reads at most `$1` rows and stops: ordered by id alone it
/// had to collect and sort every due event first, 40 ms a round behind a
/// backlog of 50,000 (a bulk job's), which made draining it quadratic.
/// Batch rows weigh their events (`event_count`), which bounds a round's
/// memory; the candidates are locked only once chosen (`SKIP LOCKED`), so a
/// second dispatcher claims what the first left.
const CLAIM: &str = "UPDATE event_outbox SET next_attempt_at = now() + make_interval(secs => $2) \
     WHERE id = ANY(ARRAY(SELECT id FROM event_outbox \
         WHERE id = ANY(ARRAY(SELECT w.id FROM ( \
             SELECT c.id, sum(c.event_count) OVER (ORDER BY c.next_attempt_at, c.id) \
                 - c.event_count AS before \
             FROM (SELECT id, event_count, next_attempt_at FROM event_outbox \
                 WHERE status = 'pending' AND next_attempt_at <= now() \
                 ORDER BY next_attempt_at, id LIMIT $1) AS c) AS w \
             WHERE w.before < $1)) \
         AND status = 'pending' AND next_attempt_at <= now() \
         FOR UPDATE SKIP LOCKED)) \
     RETURNING id, event_id, name, payload, tenant_id, organization_id, actor_user_id, \
         actor_source, command_id, action_log_id, resource_kind, resource_id, origin, \
         created_at, attempts, batch";

const DELIVERY_STATES: &str = "SELECT outbox_id, subscriber, status, attempts FROM event_deliveries WHERE outbox_id = ANY($1)";

/// Every outcome of a round in one statement (one commit): the subscribers'
/// delivery rows, the events finished (`delivered` or `dead`) and the events
/// to retry, each as parallel arrays.
const RECORD_ROUND: &str = "WITH recorded AS ( \
       INSERT INTO event_deliveries (outbox_id, subscriber, status, attempts, last_error) \
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int4[], $5::text[]) \
       ON CONFLICT (outbox_id, subscriber) DO UPDATE SET status = EXCLUDED.status, \
         attempts = EXCLUDED.attempts, last_error = EXCLUDED.last_error, updated_at = now() \
       RETURNING 1), \
     finished AS ( \
       UPDATE event_outbox AS o SET status = f.status, attempts = f.attempts, \
         delivered_at = CASE WHEN f.status = 'delivered' THEN now() END, last_error = f.error \
       FROM unnest($6::bigint[], $7::text[], $8::int4[], $9::text[]) AS f(id, status, attempts, error) \
       WHERE o.id = f.id RETURNING 1), \
     retried AS ( \
       UPDATE event_outbox AS o SET attempts = r.attempts, last_error = r.error, \
         next_attempt_at = now() + make_interval(secs => r.delay) \
       FROM unnest($10::bigint[], $11::int4[], $12::text[], $13::float8[]) AS r(id, attempts, error, delay) \
       WHERE o.id = r.id RETURNING 1) \
     SELECT (SELECT count(*) FROM recorded) + (SELECT count(*) FROM finished) \
       + (SELECT count(*) FROM retried) AS n";

/// What a round did, written by [`RECORD_ROUND`].
#[derive(Default)]
struct Round {
    /// Delivery rows: event, subscriber, status, attempts, error.
    outbox_ids: Vec<i64>,
    subscribers: Vec<String>,
    statuses: Vec<String>,
    attempts: Vec<i32>,
    errors: Vec<Option<String>>,
    /// Finished events: id, `delivered`/`dead`, attempts, error.
    finished: Vec<i64>,
    finished_status: Vec<String>,
    finished_attempts: Vec<i32>,
    finished_errors: Vec<Option<String>>,
    /// Events to retry: id, attempts, error, delay in seconds.
    retried: Vec<i64>,
    retried_attempts: Vec<i32>,
    retried_errors: Vec<Option<String>>,
    retried_delays: Vec<f64>,
}

impl Round {
    fn finish(&mut self, id: i64, status: &str, attempts: i32, error: Option<String>) {
        self.finished.push(id);
        self.finished_status.push(status.to_string());
        self.finished_attempts.push(attempts);
        self.finished_errors.push(error);
    }

    async fn record(self, conn: &mut AsyncPgConnection) -> Result<(), DbError> {
        Cached(
            diesel::sql_query(RECORD_ROUND)
                .bind::<Array<BigInt>, _>(self.outbox_ids)
                .bind::<Array<Text>, _>(self.subscribers)
                .bind::<Array<Text>, _>(self.statuses)
                .bind::<Array<Int4>, _>(self.attempts)
                .bind::<Array<Nullable<Text>>, _>(self.errors)
                .bind::<Array<BigInt>, _>(self.finished)
                .bind::<Array<Text>, _>(self.finished_status)
                .bind::<Array<Int4>, _>(self.finished_attempts)
                .bind::<Array<Nullable<Text>>, _>(self.finished_errors)
                .bind::<Array<BigInt>, _>(self.retried)
                .bind::<Array<Int4>, _>(self.retried_attempts)
                .bind::<Array<Nullable<Text>>, _>(self.retried_errors)
                .bind::<Array<Double>, _>(self.retried_delays),
        )
        .execute(conn)
        .await?;
        Ok(())
    }
}

#[derive(diesel::QueryableByName)]
struct DeliveryState {
    #[diesel(sql_type = BigInt)]
    outbox_id: i64,
    #[diesel(sql_type = Text)]
    subscriber: String,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Int4)]
    attempts: i32,
}

/// Whether `subscriber` gets `event`: it wants the name and trusts the
/// origin. An event of a wanted name from an untrusted origin is dropped for
/// it, with a warning (a forged event: a rule emitting another module's
/// event name).
fn takes(subscriber: &dyn Subscriber, event: &Delivered) -> bool {
    if !subscriber.accepts(&event.name) {
        return false;
    }
    if subscriber.origins().allows(&event.origin) {
        return true;
    }
    tracing::warn!(
        event = %event.name,
        event.id = %event.event_id,
        origin = %event.origin,
        subscriber = subscriber.id(),
        "event refused: its origin is not one the subscriber trusts"
    );
    false
}

/// Delivers pending outbox events to subscribers.
pub struct Dispatcher {
    db: Db,
    subscribers: Vec<Arc<dyn Subscriber>>,
    /// Attempts per subscriber before its delivery is marked `dead` (default 8).
    pub max_attempts: i32,
    /// Events claimed per round (default 500; a batch row counts its
    /// events, and the first row is claimed whatever its size). A claim first walks the
    /// index entries that deliveries since the last vacuum left behind
    /// (about 3 ms after a burst of 100,000 events), so larger rounds spend
    /// that once per 500 events instead of per 100; a round's events are in
    /// memory together (about 3 MiB for 500 deal events), which bounds it.
    pub batch: i64,
    /// How long a claimed round is left to this dispatcher (default 5 minutes).
    pub lease: Duration,
}

impl Dispatcher {
    pub fn new(db: Db, subscribers: Vec<Arc<dyn Subscriber>>) -> Self {
        let mut seen = std::collections::HashSet::new();
        for subscriber in &subscribers {
            if !seen.insert(subscriber.id().to_string()) {
                tracing::error!(
                    subscriber = subscriber.id(),
                    "two subscribers share an id: they share one delivery state"
                );
            }
        }
        Self {
            db,
            subscribers,
            max_attempts: 8,
            batch: 500,
            lease: Duration::from_secs(300),
        }
    }

    /// Delay before attempt `n + 1`: 1 s, 2 s, 4 s, ... capped at 5 minutes.
    pub fn backoff(attempts: i32) -> Duration {
        Duration::from_secs(1u64 << attempts.clamp(0, 8)).min(Duration::from_secs(300))
    }

    /// Claims due events, delivers each to the subscribers that accept it
    /// and have not had it yet, and records each outcome. Returns how many
    /// events were handled. No transaction is held while subscribers run.
    /// Every statement stays prepared on its connection (all are
    /// [`Cached`]), so an idle poll every 250 ms costs Postgres one
    /// statement, no parsing or planning.
    pub async fn run_once(&self) -> Result<usize, DbError> {
        // Events of every tenant, delivered to subscribers that do the same.
        crate::rls::bypass("outbox dispatcher", self.deliver_due()).await
    }

    async fn deliver_due(&self) -> Result<usize, DbError> {
        let mut conn = self.db.conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        let mut claimed: Vec<Claimed> = Cached(
            diesel::sql_query(CLAIM)
                .bind::<BigInt, _>(self.batch)
                .bind::<Double, _>(self.lease.as_secs_f64()),
        )
        .load(conn)
        .await?;
        if claimed.is_empty() {
            return Ok(0);
        }
        claimed.sort_by_key(|c| c.event.id);
        // Delivery rows exist only for an event that was tried before (they
        // are written with its retry), so a round of first attempts (a bulk
        // job's burst) skips the look-up.
        let retried: Vec<i64> = claimed
            .iter()
            .filter(|c| c.event.attempts > 0)
            .map(|c| c.event.id)
            .collect();
        let states: Vec<DeliveryState> = if retried.is_empty() {
            Vec::new()
        } else {
            Cached(diesel::sql_query(DELIVERY_STATES).bind::<Array<BigInt>, _>(&retried))
                .load(conn)
                .await?
        };
        let states: HashMap<(i64, String), (String, i32)> = states
            .into_iter()
            .map(|s| ((s.outbox_id, s.subscriber), (s.status, s.attempts)))
            .collect();
        let mut round = Round::default();
        let mut handled = 0;
        for row in claimed {
            let (id, attempts) = (row.event.id, row.event.attempts);
            match row.events() {
                Ok(events) => {
                    handled += events.len();
                    self.deliver(id, attempts, &events, &states, &mut round)
                        .await;
                }
                Err(error) => {
                    // Written by this module only; kept for inspection.
                    tracing::error!(outbox.id = id, %error, "undeliverable outbox row");
                    handled += 1;
                    round.finish(id, "dead", attempts + 1, Some(error));
                }
            }
        }
        round.record(conn).await?;
        Ok(handled)
    }

    /// Offers the events of outbox row `id` (one, or a batch) to their
    /// subscribers, in order, and adds the outcomes to `round`. A
    /// subscriber that fails on one event of a batch stops there and gets
    /// the whole batch again at the retry.
    async fn deliver(
        &self,
        id: i64,
        tried: i32,
        events: &[Delivered],
        states: &HashMap<(i64, String), (String, i32)>,
        round: &mut Round,
    ) {
        let mut retry_error: Option<String> = None;
        let mut dead_error: Option<String> = None;
        // This attempt's outcomes, per subscriber: written only when they are
        // needed later (see below).
        let mut outcomes: Vec<(&str, &'static str, i32, Option<String>)> = Vec::new();
        let mut had_state = false;
        let subscribers = self
            .subscribers
            .iter()
            .filter(|s| events.iter().any(|e| s.accepts(&e.name)));
        for subscriber in subscribers {
            let name = subscriber.id();
            let known = states.get(&(id, name.to_string()));
            had_state |= known.is_some();
            let (status, attempts) = known.map(|(s, a)| (s.as_str(), *a)).unwrap_or(("new", 0));
            match status {
                "delivered" => continue,
                "dead" => {
                    dead_error.get_or_insert_with(|| format!("{name}: gave up"));
                    continue;
                }
                _ => {}
            }
            let attempts = attempts + 1;
            let mut failure = None;
            for event in events.iter().filter(|e| takes(subscriber.as_ref(), e)) {
                if let Err(err) = subscriber.handle(event).await {
                    tracing::warn!(
                        event = %event.name,
                        event.id = %event.event_id,
                        subscriber = name,
                        attempts,
                        error = %err,
                        "event delivery failed"
                    );
                    failure = Some(err);
                    break;
                }
            }
            let (status, error) = match failure {
                None => ("delivered", None),
                Some(err) => {
                    let error = format!("{name}: {err}");
                    if attempts >= self.max_attempts {
                        dead_error.get_or_insert(error.clone());
                        ("dead", Some(error))
                    } else {
                        retry_error.get_or_insert(error.clone());
                        ("failed", Some(error))
                    }
                }
            };
            outcomes.push((name, status, attempts, error));
        }
        // Delivery rows remember which subscribers already have an event that
        // is tried again. An event every subscriber took at its first attempt
        // (nearly all of them) needs none: its own row says `delivered`. This
        // halves what a round writes (a bulk job's 200,000 events would
        // otherwise add 400,000 delivery rows).
        let all_took_it = retry_error.is_none() && dead_error.is_none() && !had_state;
        if !all_took_it {
            for (name, status, attempts, error) in outcomes {
                round.outbox_ids.push(id);
                round.subscribers.push(name.to_string());
                round.statuses.push(status.to_string());
                round.attempts.push(attempts);
                round.errors.push(error);
            }
        }
        let attempts = tried + 1;
        match retry_error {
            Some(error) => {
                round.retried.push(id);
                round.retried_attempts.push(attempts);
                round.retried_errors.push(Some(error));
                round
                    .retried_delays
                    .push(Self::backoff(attempts).as_secs_f64());
            }
            None => {
                // Every subscriber had it, or gave up on it for good.
                let status = if dead_error.is_some() {
                    "dead"
                } else {
                    "delivered"
                };
                round.finish(id, status, attempts, dead_error);
            }
        }
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
