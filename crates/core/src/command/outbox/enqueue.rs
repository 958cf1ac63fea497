//! Writing events in the transaction of the change: one row each, or batch
//! rows of one tenant's events for a write of many.

use diesel::sql_types::{Array, Int4, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::Envelope;
use crate::command::Event;
use crate::prepared::Cached;

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
pub(super) struct BatchedEvent<S, P> {
    pub(super) event_id: Uuid,
    pub(super) name: S,
    pub(super) payload: P,
    pub(super) tenant_id: Option<Uuid>,
    pub(super) organization_id: Option<Uuid>,
    pub(super) actor_user_id: Option<Uuid>,
    pub(super) actor_source: Option<S>,
    pub(super) command_id: Option<S>,
    pub(super) action_log_id: Option<Uuid>,
    pub(super) resource_kind: Option<S>,
    pub(super) resource_id: Option<S>,
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
