//! Unit tests of the parent module.

use std::sync::Arc;

use diesel_async::{AsyncConnection, AsyncPgConnection};
use futures_util::future::BoxFuture;
use serde_json::json;
use uuid::Uuid;

use super::*;
use crate::context::{AuthContext, ResolvedAcl};
use crate::registry::{Feature, ModuleInfo};
use stoa_core::AppError;

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
    // A handler works on the caller's connection: the test server's
    // maintenance database serves (the tool reads nothing).
    let url = stoa_testkit::with_database(&stoa_testkit::server_url(), "postgres");
    let mut conn = AsyncPgConnection::establish(&url)
        .await
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
            conn: &mut conn,
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
            conn: &mut conn,
            input: json!({}),
        })
        .await;
    assert_eq!(out.err().map(|e| e.status().as_u16()), Some(403));
}

struct NoDemo;

impl DemoSeeder for NoDemo {
    fn seed<'a>(
        &'a self,
        _conn: &'a mut AsyncPgConnection,
        _scope: DemoScope<'a>,
        count: i64,
    ) -> BoxFuture<'a, Result<u64, AppError>> {
        Box::pin(async move { Ok(u64::try_from(count).unwrap_or(0)) })
    }
}

#[test]
fn demo_data_is_declared_once_per_kind_in_order() {
    let mut reg = registry();
    let data = |kind| DemoData {
        kind,
        module: "deals",
        seeder: Arc::new(NoDemo),
    };
    assert_eq!(
        reg.add_demo_data(data("deals")).map_err(|e| e.to_string()),
        Ok(())
    );
    assert_eq!(
        reg.add_demo_data(data("notes")).map_err(|e| e.to_string()),
        Ok(())
    );
    assert_eq!(
        reg.add_demo_data(data("deals")),
        Err(RegistryError::DuplicateSlot("deals"))
    );
    let kinds: Vec<&str> = reg.demo_data().iter().map(|d| d.kind).collect();
    assert_eq!(kinds, ["deals", "notes"]);
}
