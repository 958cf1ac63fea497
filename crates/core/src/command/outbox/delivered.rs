//! A claimed event as subscribers receive it, and what a subscriber is.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Int4, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use super::enqueue::BatchedEvent;
use super::{EventActor, Origins};

/// A claimed outbox row: one event, or a batch of them.
#[derive(diesel::QueryableByName)]
pub(super) struct Claimed {
    #[diesel(embed)]
    pub(super) event: Delivered,
    /// The batch's JSON text: read straight into the events, without a
    /// `Value` tree of the whole array first.
    #[diesel(sql_type = Nullable<Text>)]
    pub(super) batch: Option<String>,
}

impl Claimed {
    /// The row's events, in order (an error names what is malformed).
    pub(super) fn events(self) -> Result<Vec<Delivered>, String> {
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
