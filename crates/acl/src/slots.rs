//! Registry slots: what a module offers to the modules that consume it,
//! declared like nav entries, so neither depends on the other.
//!
//! | slot | declared by | consumed by |
//! |---|---|---|
//! | [`WidgetDef`] | any module with a dashboard widget | dashboards (catalog, layouts, role widgets) |
//! | [`AnalyticsSource`] | modules whose records can be aggregated | dashboards' analytics widgets (`POST /dashboards/widgets/data`) |
//! | [`AiTool`] | modules whose data an agent may read or change | the AI assistant (agents' `allowedTools`, the approval gate) |
//! | [`RuleEntity`] | modules whose records business rules may watch | business rules (the condition language's entities, fields and events) |
//! | [`RuleWriter`] | modules whose records business rules may change | business rules (`SET_FIELD`: checked at save, written by the event trigger) |
//! | [`RecordTarget`] | modules whose records files may be attached to | attachments (upload and transfer: the record exists and the caller may write it) |
//!
//! Every slot names the features a caller must hold to use it; the registry
//! refuses an id declared twice, and [`Registry::check_slots`] (run once all
//! modules registered) refuses a feature no module registers.

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use stoa_core::AppError;
use stoa_core::db::Db;
use utoipa::ToSchema;
use uuid::Uuid;

use stoa_core::command::Actor;

use crate::context::AuthContext;
use crate::registry::{Registry, RegistryError};

/// A widget's default size on a dashboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum WidgetSize {
    Sm,
    Md,
    Lg,
}

/// A dashboard widget (the reference's widget metadata).
#[derive(Clone, Debug)]
pub struct WidgetDef {
    /// Stable id, e.g. `customers.dashboard.newDeals`.
    pub id: &'static str,
    pub module: &'static str,
    pub title: &'static str,
    pub description: Option<&'static str>,
    pub default_size: WidgetSize,
    /// Shown on a new dashboard, and given to the `employee` role.
    pub default_enabled: bool,
    /// The settings a new layout item starts with.
    pub default_settings: Option<fn() -> Value>,
    /// Every feature needed to see it.
    pub features: &'static [&'static str],
    /// e.g. `analytics`, `customers`.
    pub category: Option<&'static str>,
    pub icon: Option<&'static str>,
    pub supports_refresh: bool,
}

/// How an analytics field aggregates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// Summed and averaged (`sum`, `avg`, `min`, `max`).
    Number,
    /// An amount in minor units with a currency column beside it.
    Money,
    /// Grouped by (`groupBy`), counted distinct.
    Text,
    /// Bucketed by day, week, month.
    Date,
}

/// A field an analytics widget may aggregate or group by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnalyticsField {
    /// The name in requests, e.g. `valueAmount`.
    pub name: &'static str,
    /// Its SQL expression over [`AnalyticsSource::relation`], e.g. `d.value_amount`.
    pub sql: &'static str,
    pub kind: FieldKind,
}

/// An entity type whose records dashboards may aggregate, handed over as SQL
/// (the way `OrganizationDirectory::organization_name_sql` hands names): the
/// dashboards module builds one statement over it, always filtered by the
/// tenant column and the caller's organizations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnalyticsSource {
    /// e.g. `customers.deals`.
    pub entity_type: &'static str,
    pub module: &'static str,
    /// A relation with an alias, e.g. `customer_deals d` (live rows only:
    /// put the `deleted_at IS NULL` condition in a subselect if needed).
    pub relation: &'static str,
    /// The tenant column, e.g. `d.tenant_id` (never optional).
    pub tenant_column: &'static str,
    /// The organization column, when records belong to organizations.
    pub organization_column: Option<&'static str>,
    /// The date field ranges and buckets apply to (a `Date` field's name).
    pub date_field: &'static str,
    pub fields: &'static [AnalyticsField],
    /// Every feature needed to read it.
    pub features: &'static [&'static str],
    /// The read model whose versions the source's table bumps per tenant
    /// (`stoa_bump_tenant_read_version('<name>')` triggers, see
    /// `stoa_core::http::read_cache`): dashboards keep a widget answer while
    /// the version is unchanged. `None`: every request runs its statement.
    pub read_model: Option<&'static str>,
}

/// Whether a tool only reads or changes data (a mutation goes through the
/// assistant's approval gate: a person confirms it first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    Read,
    Mutation,
}

/// One call of a tool: the caller it acts for (its grants, tenant and
/// organizations, with the write guards attached: a mutation runs through the
/// command bus as this caller) and the input the model produced, already
/// checked against the tool's schema by the assistant.
pub struct ToolCall<'a> {
    pub auth: &'a AuthContext,
    pub db: &'a Db,
    pub input: Value,
}

/// What runs a tool. A mutation writes through the command bus with
/// `call.auth.actor()`, so it is authorized, logged and undoable like a route.
pub trait ToolHandler: Send + Sync {
    fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>>;
}

/// A tool an AI agent may call.
#[derive(Clone)]
pub struct AiTool {
    /// Dotted, e.g. `customers.update_deal_stage`.
    pub name: &'static str,
    pub module: &'static str,
    pub display_name: &'static str,
    pub description: &'static str,
    /// The JSON schema of its input (an object schema).
    pub input_schema: fn() -> Value,
    pub kind: ToolKind,
    /// Every feature the caller must hold to have it run.
    pub features: &'static [&'static str],
    pub handler: Arc<dyn ToolHandler>,
    /// For a mutation: loads the record it would change, for the approval
    /// card's diff and the confirm-time version check. It answers
    /// `{recordId, entityType, recordVersion, before}` (`recordVersion`: a
    /// string that changes with every write, e.g. `updatedAt`) for the same
    /// input as the handler, as the same caller.
    pub before: Option<Arc<dyn ToolHandler>>,
}

impl std::fmt::Debug for AiTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AiTool")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("features", &self.features)
            .finish_non_exhaustive()
    }
}

impl AiTool {
    /// Runs the tool for `call.auth`: 403 (naming the features) unless the
    /// caller holds every feature the tool declares. The assistant's own gate
    /// checks more (whitelists, policies); this one holds for every caller.
    pub async fn run(&self, call: ToolCall<'_>) -> Result<Value, AppError> {
        call.auth.require_all(self.features)?;
        self.handler.call(call).await
    }

    /// The record a mutation would change ([`AiTool::before`]), checked like
    /// [`AiTool::run`]; `None` when the tool declares no loader.
    pub async fn load_before(&self, call: ToolCall<'_>) -> Result<Option<Value>, AppError> {
        call.auth.require_all(self.features)?;
        match &self.before {
            Some(loader) => loader.call(call).await.map(Some),
            None => Ok(None),
        }
    }
}

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
    pub db: &'a Db,
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
    /// `call.actor()`; answers what the action reports (`{operationId, ...}`).
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

/// What answers, for the module owning an entity, where one of its records
/// lives. It reads the owner's own tables on the caller's connection (inside
/// the consumer's transaction); the reach of the caller is decided once, by
/// [`RecordTarget::require_writable`] with [`AuthContext::reach`].
pub trait RecordChecker: Send + Sync {
    /// The organization of record `record_id` of `tenant` (`Some(None)`: a
    /// tenant-wide record); `None` when that tenant has no such record (an
    /// id that is not even well-formed included: never an error).
    fn organization_of<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        record_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Option<Uuid>>, AppError>>;
}

/// An entity whose records other modules may hang things on (attachments:
/// files of a deal, media of a product), answered by its owner so no module
/// reads another's tables.
#[derive(Clone)]
pub struct RecordTarget {
    /// The entity id as attachments name it, e.g. `catalog:catalog_product`.
    pub entity_id: &'static str,
    pub module: &'static str,
    /// Every feature needed to attach to its records (to see them).
    pub features: &'static [&'static str],
    pub checker: Arc<dyn RecordChecker>,
}

impl std::fmt::Debug for RecordTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordTarget")
            .field("entity_id", &self.entity_id)
            .field("features", &self.features)
            .finish_non_exhaustive()
    }
}

impl RecordTarget {
    /// The record `record_id` for a write of `auth` attached to it: 403
    /// (naming the features) without the target's features, `not_found` when
    /// the caller's tenant has no such record or it lies in an organization
    /// the caller does not see, 403 `organization_out_of_scope` when the
    /// caller may only read it; else the record's organization.
    pub async fn require_writable(
        &self,
        conn: &mut AsyncPgConnection,
        auth: &AuthContext,
        record_id: &str,
        not_found: impl FnOnce() -> AppError,
    ) -> Result<Option<Uuid>, AppError> {
        auth.require_all(self.features)?;
        let tenant = auth.tenant()?;
        let Some(organization) = self
            .checker
            .organization_of(conn, tenant, record_id)
            .await?
        else {
            return Err(not_found());
        };
        auth.require_writable(Some(tenant), organization, not_found)?;
        Ok(organization)
    }
}

/// The slots of a registry (one field of [`Registry`]).
#[derive(Clone, Debug, Default)]
pub struct Slots {
    widgets: Vec<WidgetDef>,
    analytics: Vec<AnalyticsSource>,
    tools: Vec<AiTool>,
    rule_entities: Vec<RuleEntity>,
    rule_writers: Vec<RuleWriter>,
    record_targets: Vec<RecordTarget>,
}

fn once<T>(
    list: &[T],
    id: &'static str,
    key: impl Fn(&T) -> &'static str,
) -> Result<(), RegistryError> {
    if list.iter().any(|item| key(item) == id) {
        Err(RegistryError::DuplicateSlot(id))
    } else {
        Ok(())
    }
}

impl Registry {
    /// Declares a dashboard widget (an id may be declared once).
    pub fn add_widget(&mut self, widget: WidgetDef) -> Result<(), RegistryError> {
        once(&self.slots().widgets, widget.id, |w| w.id)?;
        self.slots_mut().widgets.push(widget);
        Ok(())
    }

    /// Every widget, in registration order (the dashboards' catalog order).
    pub fn widgets(&self) -> &[WidgetDef] {
        &self.slots().widgets
    }

    /// Declares an analytics source (an entity type may be declared once).
    pub fn add_analytics_source(&mut self, source: AnalyticsSource) -> Result<(), RegistryError> {
        once(&self.slots().analytics, source.entity_type, |s| {
            s.entity_type
        })?;
        if !source
            .fields
            .iter()
            .any(|f| f.name == source.date_field && f.kind == FieldKind::Date)
        {
            return Err(RegistryError::InvalidSlot {
                id: source.entity_type,
                message: "its date field must be one of its `Date` fields",
            });
        }
        self.slots_mut().analytics.push(source);
        Ok(())
    }

    pub fn analytics_sources(&self) -> &[AnalyticsSource] {
        &self.slots().analytics
    }

    pub fn analytics_source(&self, entity_type: &str) -> Option<&AnalyticsSource> {
        self.slots()
            .analytics
            .iter()
            .find(|s| s.entity_type == entity_type)
    }

    /// Declares an AI tool (a name may be declared once; its input schema
    /// must be a JSON object schema).
    pub fn add_ai_tool(&mut self, tool: AiTool) -> Result<(), RegistryError> {
        once(&self.slots().tools, tool.name, |t| t.name)?;
        if (tool.input_schema)()["type"] != "object" {
            return Err(RegistryError::InvalidSlot {
                id: tool.name,
                message: "its input schema must be an object schema",
            });
        }
        self.slots_mut().tools.push(tool);
        Ok(())
    }

    pub fn ai_tools(&self) -> &[AiTool] {
        &self.slots().tools
    }

    pub fn ai_tool(&self, name: &str) -> Option<&AiTool> {
        self.slots().tools.iter().find(|t| t.name == name)
    }

    /// Declares an entity business rules may watch (once per entity type).
    pub fn add_rule_entity(&mut self, entity: RuleEntity) -> Result<(), RegistryError> {
        once(&self.slots().rule_entities, entity.entity_type, |e| {
            e.entity_type
        })?;
        self.slots_mut().rule_entities.push(entity);
        Ok(())
    }

    pub fn rule_entities(&self) -> &[RuleEntity] {
        &self.slots().rule_entities
    }

    pub fn rule_entity(&self, entity_type: &str) -> Option<&RuleEntity> {
        self.slots()
            .rule_entities
            .iter()
            .find(|e| e.entity_type == entity_type)
    }

    /// Declares an entity whose fields rules may write (once per entity
    /// type, with at least one field).
    pub fn add_rule_writer(&mut self, writer: RuleWriter) -> Result<(), RegistryError> {
        once(&self.slots().rule_writers, writer.entity_type, |w| {
            w.entity_type
        })?;
        if writer.fields.is_empty() {
            return Err(RegistryError::InvalidSlot {
                id: writer.entity_type,
                message: "it must declare at least one writable field",
            });
        }
        self.slots_mut().rule_writers.push(writer);
        Ok(())
    }

    pub fn rule_writers(&self) -> &[RuleWriter] {
        &self.slots().rule_writers
    }

    pub fn rule_writer(&self, entity_type: &str) -> Option<&RuleWriter> {
        self.slots()
            .rule_writers
            .iter()
            .find(|w| w.entity_type == entity_type)
    }

    /// Declares an entity whose records may be attached to (once per entity id).
    pub fn add_record_target(&mut self, target: RecordTarget) -> Result<(), RegistryError> {
        once(&self.slots().record_targets, target.entity_id, |t| {
            t.entity_id
        })?;
        self.slots_mut().record_targets.push(target);
        Ok(())
    }

    pub fn record_targets(&self) -> &[RecordTarget] {
        &self.slots().record_targets
    }

    /// The owner's answer for `entity_id`; `None` when no module declares it.
    pub fn record_target(&self, entity_id: &str) -> Option<&RecordTarget> {
        self.slots()
            .record_targets
            .iter()
            .find(|t| t.entity_id == entity_id)
    }

    /// Refuses a slot naming a feature no module registers (run once every
    /// module has registered: slots may name other modules' features).
    pub fn check_slots(&self) -> Result<(), RegistryError> {
        let s = self.slots();
        let named = s
            .widgets
            .iter()
            .map(|w| (w.id, w.features))
            .chain(s.analytics.iter().map(|a| (a.entity_type, a.features)))
            .chain(s.tools.iter().map(|t| (t.name, t.features)))
            .chain(s.rule_entities.iter().map(|e| (e.entity_type, e.features)))
            .chain(s.rule_writers.iter().map(|w| (w.entity_type, w.features)))
            .chain(s.record_targets.iter().map(|t| (t.entity_id, t.features)));
        for (slot, features) in named {
            if let Some(feature) = features.iter().find(|f| self.get(f).is_none()) {
                return Err(RegistryError::UnknownSlotFeature { slot, feature });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use uuid::Uuid;

    use super::*;
    use crate::context::ResolvedAcl;
    use crate::registry::{Feature, ModuleInfo};

    const DEALS: ModuleInfo = ModuleInfo {
        id: "deals",
        title: "Deals",
    };
    const VIEW: Feature = Feature {
        id: "deals.view",
        title: "View deals",
        module: "deals",
    };

    fn registry() -> Registry {
        let mut reg = Registry::new();
        assert_eq!(reg.register(DEALS, &[VIEW]), Ok(()));
        reg
    }

    fn widget(id: &'static str, features: &'static [&'static str]) -> WidgetDef {
        WidgetDef {
            id,
            module: "deals",
            title: "New deals",
            description: None,
            default_size: WidgetSize::Sm,
            default_enabled: true,
            default_settings: Some(|| json!({"days": 7})),
            features,
            category: Some("deals"),
            icon: None,
            supports_refresh: true,
        }
    }

    const FIELDS: &[AnalyticsField] = &[
        AnalyticsField {
            name: "createdAt",
            sql: "d.created_at",
            kind: FieldKind::Date,
        },
        AnalyticsField {
            name: "valueAmount",
            sql: "d.value_amount",
            kind: FieldKind::Money,
        },
    ];

    fn source(date_field: &'static str) -> AnalyticsSource {
        AnalyticsSource {
            entity_type: "deals.deals",
            module: "deals",
            relation: "deals d",
            tenant_column: "d.tenant_id",
            organization_column: Some("d.organization_id"),
            date_field,
            fields: FIELDS,
            features: &["deals.view"],
            read_model: None,
        }
    }

    /// Echoes its input with the caller's tenant.
    struct Echo;

    impl ToolHandler for Echo {
        fn call<'a>(&'a self, call: ToolCall<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
            Box::pin(async move { Ok(json!({"input": call.input, "tenant": call.auth.tenant_id})) })
        }
    }

    fn tool(name: &'static str, schema: fn() -> Value) -> AiTool {
        AiTool {
            name,
            module: "deals",
            display_name: "Find deals",
            description: "Finds deals by name",
            input_schema: schema,
            kind: ToolKind::Read,
            features: &["deals.view"],
            handler: Arc::new(Echo),
            before: None,
        }
    }

    #[test]
    fn slots_are_declared_once_and_found_by_id() {
        let mut reg = registry();
        assert_eq!(
            reg.add_widget(widget("deals.dashboard.new", &["deals.view"])),
            Ok(())
        );
        assert_eq!(
            reg.add_widget(widget("deals.dashboard.new", &[])),
            Err(RegistryError::DuplicateSlot("deals.dashboard.new"))
        );
        assert_eq!(reg.widgets().len(), 1);
        assert_eq!(
            reg.widgets()[0].default_settings.map(|f| f()),
            Some(json!({"days": 7}))
        );

        assert_eq!(reg.add_analytics_source(source("createdAt")), Ok(()));
        assert!(reg.analytics_source("deals.deals").is_some());
        assert!(reg.analytics_source("deals.other").is_none());
        let mut other = source("valueAmount");
        other.entity_type = "deals.other";
        assert!(matches!(
            reg.add_analytics_source(other),
            Err(RegistryError::InvalidSlot { .. })
        ));

        assert_eq!(
            reg.add_ai_tool(tool("deals.find", || json!({"type": "object"})))
                .ok(),
            Some(())
        );
        assert!(matches!(
            reg.add_ai_tool(tool("deals.bad", || json!({"type": "string"}))),
            Err(RegistryError::InvalidSlot { .. })
        ));
        assert!(matches!(
            reg.add_ai_tool(tool("deals.find", || json!({"type": "object"}))),
            Err(RegistryError::DuplicateSlot("deals.find"))
        ));

        let entity = RuleEntity {
            entity_type: "deals.deal",
            module: "deals",
            label: "Deal",
            fields: &[RuleField {
                name: "valueAmount",
                label: "Value",
                kind: RuleFieldKind::Number,
            }],
            events: &["deals.deal.updated"],
            features: &["deals.view"],
        };
        assert_eq!(reg.add_rule_entity(entity), Ok(()));
        assert_eq!(
            reg.add_rule_entity(entity),
            Err(RegistryError::DuplicateSlot("deals.deal"))
        );
        assert_eq!(
            reg.rule_entity("deals.deal").map(|e| e.events),
            Some(&["deals.deal.updated"][..])
        );
        assert_eq!(reg.check_slots(), Ok(()));
    }

    /// Accepts any string for `status`.
    struct Statuses;

    impl FieldWriter for Statuses {
        fn check(&self, _field: &str, value: &Value) -> Result<(), String> {
            value
                .as_str()
                .map(|_| ())
                .ok_or_else(|| "must be a string".to_string())
        }
        fn write<'a>(&'a self, call: FieldWrite<'a>) -> BoxFuture<'a, Result<Value, AppError>> {
            Box::pin(async move { Ok(json!({"source": call.actor().source})) })
        }
    }

    #[test]
    fn rule_writers_are_declared_once_with_fields_and_check_field_then_value() {
        let mut reg = registry();
        let writer = |fields: &'static [&'static str]| RuleWriter {
            entity_type: "deals.deal",
            module: "deals",
            fields,
            features: &["deals.view"],
            writer: Arc::new(Statuses),
        };
        assert!(matches!(
            reg.add_rule_writer(writer(&[])),
            Err(RegistryError::InvalidSlot { .. })
        ));
        assert_eq!(reg.add_rule_writer(writer(&["status"])).ok(), Some(()));
        assert!(matches!(
            reg.add_rule_writer(writer(&["status"])),
            Err(RegistryError::DuplicateSlot("deals.deal"))
        ));
        let found = reg.rule_writer("deals.deal").unwrap();
        assert_eq!(found.check("status", &json!("won")), Ok(()));
        assert_eq!(
            found.check("status", &json!(1)),
            Err("must be a string".into())
        );
        assert!(
            found
                .check("title", &json!("x"))
                .is_err_and(|e| e.contains("not a writable field"))
        );
        assert!(reg.rule_writer("deals.other").is_none());
        assert_eq!(reg.check_slots(), Ok(()));
    }

    #[test]
    fn a_slot_naming_an_unregistered_feature_is_refused() {
        let mut reg = registry();
        assert_eq!(
            reg.add_widget(widget("deals.dashboard.x", &["sales.orders.view"])),
            Ok(())
        );
        assert_eq!(
            reg.check_slots(),
            Err(RegistryError::UnknownSlotFeature {
                slot: "deals.dashboard.x",
                feature: "sales.orders.view",
            })
        );
    }

    /// Finds nothing.
    struct Nothing;

    impl RecordChecker for Nothing {
        fn organization_of<'a>(
            &'a self,
            _conn: &'a mut AsyncPgConnection,
            _tenant: Uuid,
            _record_id: &'a str,
        ) -> BoxFuture<'a, Result<Option<Option<Uuid>>, AppError>> {
            Box::pin(async { Ok(None) })
        }
    }

    #[test]
    fn record_targets_are_declared_once_and_their_features_checked() {
        let mut reg = registry();
        let target = |features: &'static [&'static str]| RecordTarget {
            entity_id: "deals:deal",
            module: "deals",
            features,
            checker: Arc::new(Nothing),
        };
        assert_eq!(
            reg.add_record_target(target(&["deals.view"])).ok(),
            Some(())
        );
        assert!(matches!(
            reg.add_record_target(target(&["deals.view"])),
            Err(RegistryError::DuplicateSlot("deals:deal"))
        ));
        assert!(reg.record_target("deals:deal").is_some());
        assert!(reg.record_target("deals:other").is_none());
        assert_eq!(reg.check_slots(), Ok(()));
        let mut other = registry();
        let mut unknown = target(&["sales.orders.view"]);
        unknown.entity_id = "deals:unknown";
        assert_eq!(other.add_record_target(unknown).ok(), Some(()));
        assert_eq!(
            other.check_slots(),
            Err(RegistryError::UnknownSlotFeature {
                slot: "deals:unknown",
                feature: "sales.orders.view",
            })
        );
    }

    #[actix_web::test]
    async fn a_tool_runs_for_a_caller_holding_its_features_only() {
        let db = Db::from_url(
            "postgres://docs@127.0.0.1:1/none",
            1,
            Duration::from_millis(1),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let tenant = Uuid::from_u128(9);
        let caller = |features: &[&str]| {
            AuthContext::for_user(tenant, None, Uuid::nil()).with_acl(ResolvedAcl {
                features: features.iter().map(|f| f.to_string()).collect(),
                ..Default::default()
            })
        };
        let t = tool("deals.find", || json!({"type": "object"}));
        let allowed = caller(&["deals.*"]);
        let out = t
            .run(ToolCall {
                auth: &allowed,
                db: &db,
                input: json!({"q": "acme"}),
            })
            .await;
        assert_eq!(
            out.ok(),
            Some(json!({"input": {"q": "acme"}, "tenant": tenant}))
        );
        let denied = caller(&["other.view"]);
        let out = t
            .run(ToolCall {
                auth: &denied,
                db: &db,
                input: json!({}),
            })
            .await;
        assert_eq!(out.err().map(|e| e.status().as_u16()), Some(403));
    }
}
