//! The business-rule slots: entities rules may watch, and the writers
//! their `SET_FIELD` actions change records through.

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use stoa_core::AppError;
use utoipa::ToSchema;

use stoa_core::command::Actor;

use crate::context::AuthContext;

/// The type of a field business rules may test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RuleFieldKind {
    Text,
    Number,
    Boolean,
    Date,
    Uuid,
}

/// A field of a rule entity (`deal.valueAmount`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleField {
    pub name: &'static str,
    pub label: &'static str,
    pub kind: RuleFieldKind,
}

/// An entity business rules may watch: its fields (what conditions test)
/// and the events that trigger rules (the domain events its commands emit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleEntity {
    /// e.g. `customers.deal`.
    pub entity_type: &'static str,
    pub module: &'static str,
    pub label: &'static str,
    pub fields: &'static [RuleField],
    /// e.g. `customers.deal.updated`.
    pub events: &'static [&'static str],
    /// Every feature needed to write rules about it.
    pub features: &'static [&'static str],
}

/// One `SET_FIELD` write: a top-level field of one record, as `auth`.
pub struct FieldWrite<'a> {
    /// The caller's connection, in the caller's transaction: the write is
    /// one step of it (the caller commits or rolls back).
    pub conn: &'a mut AsyncPgConnection,
    /// Who writes: for a rule, a system principal of the rule's tenant
    /// scoped to the record's organization and holding the writer's
    /// features, with the registry's write guards attached.
    pub auth: &'a AuthContext,
    /// The record's id (the event's resource id).
    pub record_id: &'a str,
    pub field: &'a str,
    pub value: Value,
    /// Goes into the action-log entry's context (`{"businessRule": {...}}`):
    /// who asked for the write beyond `auth`, and the marker that keeps the
    /// write's own events from triggering rules again.
    pub context: Value,
}

impl FieldWrite<'_> {
    /// The command-bus actor of the write: `auth`'s, recorded as `system`
    /// work (no user asked for it).
    pub fn actor(&self) -> Actor {
        let mut actor = self.auth.actor();
        actor.source = "system";
        actor
    }
}

/// What writes fields of an entity's records for rules.
pub trait FieldWriter: Send + Sync {
    /// `Err(message)` when `value` can never be valid for `field` (checked
    /// exactly as the module's update route checks its body).
    fn check(&self, field: &str, value: &Value) -> Result<(), String>;

    /// Writes the field through the module's own update command (command
    /// bus, action log with `call.context`, undo, events, write guards) as
    /// `call.actor()` on `call.conn`; answers what the action reports
    /// (`{operationId, ...}`).
    fn write<'a>(&'a self, call: FieldWrite<'a>) -> BoxFuture<'a, Result<Value, AppError>>;
}

/// An entity whose top-level fields business rules may write (`SET_FIELD`).
#[derive(Clone)]
pub struct RuleWriter {
    /// The rule entity type, e.g. `customers.deal` (as [`RuleEntity`]).
    pub entity_type: &'static str,
    pub module: &'static str,
    /// The writable fields (the update command's body keys, e.g. `status`).
    pub fields: &'static [&'static str],
    /// Every feature needed to save a rule that writes it (and what the
    /// rule's system principal holds when it writes).
    pub features: &'static [&'static str],
    pub writer: Arc<dyn FieldWriter>,
}

impl std::fmt::Debug for RuleWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleWriter")
            .field("entity_type", &self.entity_type)
            .field("fields", &self.fields)
            .field("features", &self.features)
            .finish_non_exhaustive()
    }
}

impl RuleWriter {
    /// `Err(message)` unless `field` is writable and `value` may be valid.
    pub fn check(&self, field: &str, value: &Value) -> Result<(), String> {
        if !self.fields.contains(&field) {
            return Err(format!(
                "is not a writable field of {} (one of: {})",
                self.entity_type,
                self.fields.join(", ")
            ));
        }
        self.writer.check(field, value)
    }
}
