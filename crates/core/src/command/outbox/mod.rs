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

mod delivered;
mod dispatcher;
mod enqueue;

use std::borrow::Cow;

use serde::Serialize;
use uuid::Uuid;

pub use delivered::{Delivered, LogSubscriber, Subscriber};
pub use dispatcher::Dispatcher;
pub use enqueue::{BATCH_FROM, BATCH_MAX, BATCH_NAME, enqueue, enqueue_many};

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
