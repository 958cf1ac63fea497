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
//! | [`DemoData`] | modules whose records a new workspace may start with | onboarding (the "prepare workspace" job) |
//!
//! Every slot names the features a caller must hold to use it; the registry
//! refuses an id declared twice, and [`Registry::check_slots`] (run once all
//! modules registered) refuses a feature no module registers.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

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

pub use ai::{AiTool, ToolCall, ToolHandler, ToolKind};
pub use rules::{FieldWrite, FieldWriter, RuleEntity, RuleField, RuleFieldKind, RuleWriter};

pub use demo::{DemoData, DemoScope, DemoSeeder};
pub use records::{OrganizationColumn, RecordChecker, RecordTarget};

/// The slots of a registry (one field of [`Registry`]).
#[derive(Clone, Debug, Default)]
pub struct Slots {
    widgets: Vec<WidgetDef>,
    analytics: Vec<AnalyticsSource>,
    tools: Vec<AiTool>,
    rule_entities: Vec<RuleEntity>,
    rule_writers: Vec<RuleWriter>,
    record_targets: Vec<RecordTarget>,
    demo_data: Vec<DemoData>,
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

    /// Declares a kind of demo records (once per kind).
    pub fn add_demo_data(&mut self, data: DemoData) -> Result<(), RegistryError> {
        once(&self.slots().demo_data, data.kind, |d| d.kind)?;
        self.slots_mut().demo_data.push(data);
        Ok(())
    }

    /// Every kind of demo records, in registration order.
    pub fn demo_data(&self) -> &[DemoData] {
        &self.slots().demo_data
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

mod ai;
mod demo;
mod records;
mod rules;
#[cfg(test)]
mod tests;
