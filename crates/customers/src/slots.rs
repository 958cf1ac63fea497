//! What other modules read of deals without depending on this crate: the
//! analytics source dashboards aggregate, the dashboard widgets and the rule
//! entity business rules watch (`stoa_acl::slots`).

use serde_json::json;
use stoa_acl::slots::{
    AnalyticsField, AnalyticsSource, FieldKind, RuleEntity, RuleField, RuleFieldKind, WidgetDef,
    WidgetSize,
};

use crate::commands::deals::EVENTS;
use crate::{DEALS_VIEW, MODULE};

/// Deals as dashboards aggregate them. `valueAmount` is in major units
/// (`numeric(18,4)`), with `valueCurrency` beside it: sums are meaningful
/// per currency (group by `valueCurrency`).
pub const DEALS_SOURCE: AnalyticsSource = AnalyticsSource {
    entity_type: "customers:deals",
    module: MODULE.id,
    relation: "customer_deals d",
    tenant_column: "d.tenant_id",
    organization_column: Some("d.organization_id"),
    date_field: "createdAt",
    fields: &[
        // Counted by id, as the reference's widgets do.
        AnalyticsField {
            name: "id",
            sql: "d.id",
            kind: FieldKind::Text,
        },
        AnalyticsField {
            name: "valueAmount",
            sql: "d.value_amount",
            kind: FieldKind::Number,
        },
        AnalyticsField {
            name: "valueCurrency",
            sql: "d.value_currency",
            kind: FieldKind::Text,
        },
        AnalyticsField {
            name: "probability",
            sql: "d.probability",
            kind: FieldKind::Number,
        },
        AnalyticsField {
            name: "status",
            sql: "d.status",
            kind: FieldKind::Text,
        },
        AnalyticsField {
            name: "pipelineStage",
            sql: "d.pipeline_stage",
            kind: FieldKind::Text,
        },
        AnalyticsField {
            name: "pipelineStageId",
            sql: "d.pipeline_stage_id::text",
            kind: FieldKind::Text,
        },
        AnalyticsField {
            name: "pipelineId",
            sql: "d.pipeline_id::text",
            kind: FieldKind::Text,
        },
        AnalyticsField {
            name: "ownerUserId",
            sql: "d.owner_user_id::text",
            kind: FieldKind::Text,
        },
        AnalyticsField {
            name: "createdAt",
            sql: "d.created_at",
            kind: FieldKind::Date,
        },
        AnalyticsField {
            name: "updatedAt",
            sql: "d.updated_at",
            kind: FieldKind::Date,
        },
        AnalyticsField {
            name: "expectedCloseAt",
            sql: "d.expected_close_at",
            kind: FieldKind::Date,
        },
    ],
    features: &[DEALS_VIEW],
    read_model: Some("customers.deals"),
};

/// The dashboard widgets (the reference's `customers.widgets.new-deals`, and
/// a pipeline overview built on the analytics source).
pub fn widgets() -> Vec<WidgetDef> {
    vec![
        WidgetDef {
            id: "customers.dashboard.newDeals",
            module: MODULE.id,
            title: "New deals",
            description: Some("Deals created recently"),
            default_size: WidgetSize::Md,
            default_enabled: true,
            default_settings: Some(|| json!({"pageSize": 5, "days": 30})),
            features: &[DEALS_VIEW],
            category: Some("customers"),
            icon: Some("handshake"),
            supports_refresh: true,
        },
        WidgetDef {
            id: "customers.dashboard.pipelineValue",
            module: MODULE.id,
            title: "Pipeline value by stage",
            description: Some("Sum of open deal values per pipeline stage"),
            default_size: WidgetSize::Lg,
            default_enabled: false,
            default_settings: Some(
                || json!({"entityType": "customers:deals", "metric": "sum", "field": "valueAmount", "groupBy": "pipelineStage"}),
            ),
            features: &[DEALS_VIEW],
            category: Some("analytics"),
            icon: Some("chart-bar"),
            supports_refresh: true,
        },
    ]
}

/// Deals as business rules test them and the events that trigger rules.
pub const DEAL_RULES: RuleEntity = RuleEntity {
    entity_type: "customers.deal",
    module: MODULE.id,
    label: "Deal",
    fields: &[
        RuleField {
            name: "title",
            label: "Title",
            kind: RuleFieldKind::Text,
        },
        RuleField {
            name: "status",
            label: "Status",
            kind: RuleFieldKind::Text,
        },
        RuleField {
            name: "valueAmount",
            label: "Value",
            kind: RuleFieldKind::Number,
        },
        RuleField {
            name: "valueCurrency",
            label: "Currency",
            kind: RuleFieldKind::Text,
        },
        RuleField {
            name: "probability",
            label: "Probability",
            kind: RuleFieldKind::Number,
        },
        RuleField {
            name: "pipelineId",
            label: "Pipeline",
            kind: RuleFieldKind::Uuid,
        },
        RuleField {
            name: "pipelineStageId",
            label: "Stage",
            kind: RuleFieldKind::Uuid,
        },
        RuleField {
            name: "ownerUserId",
            label: "Owner",
            kind: RuleFieldKind::Uuid,
        },
        RuleField {
            name: "expectedCloseAt",
            label: "Expected close",
            kind: RuleFieldKind::Date,
        },
    ],
    events: EVENTS,
    features: &[DEALS_VIEW],
};
