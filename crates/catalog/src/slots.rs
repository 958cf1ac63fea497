//! What the catalog offers other modules through the registry
//! (`stoa_acl::slots`), so they need not depend on this crate: the
//! `catalog:products` analytics source, a dashboard widget, and the rule
//! entity business rules watch (its events are the ones the commands emit).

use serde_json::json;
use stoa_acl::slots::{
    AnalyticsField, AnalyticsSource, FieldKind, RuleEntity, RuleField, RuleFieldKind, WidgetDef,
    WidgetSize,
};
use stoa_acl::{Registry, RegistryError};

use crate::VIEW;
use crate::commands::{CREATED_EVENT, DELETED_EVENT, UPDATED_EVENT};

/// Products as dashboards aggregate them (deleted products are gone from
/// the table, so every row counts).
pub const PRODUCTS_SOURCE: AnalyticsSource = AnalyticsSource {
    entity_type: "catalog:products",
    module: "catalog",
    relation: "catalog_products p",
    tenant_column: "p.tenant_id",
    organization_column: Some("p.organization_id"),
    date_field: "createdAt",
    fields: &[
        // Counted by id, as the reference's widgets do.
        AnalyticsField {
            name: "id",
            sql: "p.id",
            kind: FieldKind::Text,
        },
        AnalyticsField {
            name: "createdAt",
            sql: "p.created_at",
            kind: FieldKind::Date,
        },
        AnalyticsField {
            name: "updatedAt",
            sql: "p.updated_at",
            kind: FieldKind::Date,
        },
        // A decimal amount in major units (numeric(18,4)), not minor units:
        // summed and averaged as a number, grouped with `priceCurrency`.
        AnalyticsField {
            name: "priceAmount",
            sql: "p.price_amount",
            kind: FieldKind::Number,
        },
        AnalyticsField {
            name: "priceCurrency",
            sql: "p.price_currency",
            kind: FieldKind::Text,
        },
        AnalyticsField {
            name: "productType",
            sql: "p.product_type",
            kind: FieldKind::Text,
        },
        AnalyticsField {
            name: "isActive",
            sql: "CASE WHEN p.is_active THEN 'active' ELSE 'inactive' END",
            kind: FieldKind::Text,
        },
        AnalyticsField {
            name: "organizationId",
            sql: "p.organization_id::text",
            kind: FieldKind::Text,
        },
    ],
    features: &[VIEW],
    read_model: Some("catalog.products"),
};

fn new_products_settings() -> serde_json::Value {
    json!({"days": 30, "limit": 5})
}

/// The newest products, for the dashboards' catalog.
pub const NEW_PRODUCTS_WIDGET: WidgetDef = WidgetDef {
    id: "catalog.dashboard.newProducts",
    module: "catalog",
    title: "New products",
    description: Some("Products added recently"),
    default_size: WidgetSize::Md,
    default_enabled: false,
    default_settings: Some(new_products_settings),
    features: &[VIEW],
    category: Some("catalog"),
    icon: Some("package"),
    supports_refresh: true,
};

/// What business rules may test about a product and react to.
pub const PRODUCT_RULES: RuleEntity = RuleEntity {
    entity_type: "catalog.product",
    module: "catalog",
    label: "Product",
    fields: &[
        RuleField {
            name: "title",
            label: "Title",
            kind: RuleFieldKind::Text,
        },
        RuleField {
            name: "sku",
            label: "SKU",
            kind: RuleFieldKind::Text,
        },
        RuleField {
            name: "productType",
            label: "Product type",
            kind: RuleFieldKind::Text,
        },
        RuleField {
            name: "isActive",
            label: "Active",
            kind: RuleFieldKind::Boolean,
        },
        RuleField {
            name: "priceAmount",
            label: "Price",
            kind: RuleFieldKind::Number,
        },
        RuleField {
            name: "priceCurrency",
            label: "Currency",
            kind: RuleFieldKind::Text,
        },
        RuleField {
            name: "organizationId",
            label: "Organization",
            kind: RuleFieldKind::Uuid,
        },
    ],
    events: &[CREATED_EVENT, UPDATED_EVENT, DELETED_EVENT],
    features: &[VIEW],
};

/// Declares the slots (called by [`crate::register`]).
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.add_analytics_source(PRODUCTS_SOURCE)?;
    registry.add_widget(NEW_PRODUCTS_WIDGET)?;
    registry.add_rule_entity(PRODUCT_RULES)
}
