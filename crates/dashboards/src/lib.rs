//! stoa-dashboards: every user's dashboard (a layout of widgets), the widget
//! catalog, the widgets assigned to roles and users, and the analytics engine
//! behind the widgets' numbers (`POST /dashboards/widgets/data`).
//!
//! It registers two modules: `dashboards` (layouts and assignments) and
//! `analytics` (widget data). Widgets and the records analytics may aggregate
//! come from every module through the registry slots
//! ([`stoa_acl::slots::WidgetDef`], [`stoa_acl::slots::AnalyticsSource`]),
//! so no module depends on this crate. Roles and users are reached through
//! `stoa_acl::accounts`. See README.md for the endpoints.
#![doc = include_str!("../README.md")]

pub mod analytics;
pub mod commands;
pub mod dto;
pub mod error;
pub mod model;
pub mod operations;
pub mod queries;
pub mod reach;
pub mod routes;
pub mod seeder;
pub mod service;
pub mod widgets;

use std::sync::Arc;

use stoa_acl::slots::{WidgetDef, WidgetSize};
use stoa_acl::{Feature, ModuleInfo, NavEntry, NavPlacement, Registry, RegistryError};
use stoa_core::http::ServiceConfig;

pub use commands::handlers_with;

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "dashboards",
    title: "Dashboards",
};
pub const ANALYTICS_MODULE: ModuleInfo = ModuleInfo {
    id: "analytics",
    title: "Analytics",
};

/// See one's dashboard (`GET /dashboards/layout`).
pub const VIEW: &str = "dashboards.view";
/// Change one's dashboard (`PUT`/`PATCH` layout).
pub const CONFIGURE: &str = "dashboards.configure";
/// The catalog and the widgets of roles and users.
pub const ASSIGN: &str = "dashboards.admin.assign-widgets";
/// Widget data.
pub const ANALYTICS_VIEW: &str = "analytics.view";

pub const FEATURES: &[Feature] = &[
    Feature {
        id: VIEW,
        title: "View dashboard",
        module: "dashboards",
    },
    Feature {
        id: CONFIGURE,
        title: "Configure own dashboard",
        module: "dashboards",
    },
    Feature {
        id: ASSIGN,
        title: "Assign dashboard widgets to roles and users",
        module: "dashboards",
    },
];

pub const ANALYTICS_FEATURES: &[Feature] = &[Feature {
    id: ANALYTICS_VIEW,
    title: "View analytics widgets",
    module: "analytics",
}];

/// The dashboard is the backend's home page.
pub const NAV: &[NavEntry] = &[NavEntry {
    id: "dashboards.home",
    module: "dashboards",
    placement: NavPlacement::Main,
    group_id: "dashboards",
    group_label: "Dashboard",
    href: "/backend",
    title: "Dashboard",
    features: &[VIEW],
    order: 0,
    icon: Some("layout-dashboard"),
}];

/// The widgets of this crate, over the wave-1 analytics sources (users and
/// action logs); other modules declare theirs in their own `register`.
pub const WIDGETS: &[WidgetDef] = &[
    WidgetDef {
        id: "dashboards.welcome",
        module: "dashboards",
        title: "Welcome",
        description: Some("A greeting with shortcuts"),
        default_size: WidgetSize::Md,
        default_enabled: true,
        default_settings: None,
        features: &[VIEW],
        category: Some("dashboards"),
        icon: Some("hand"),
        supports_refresh: false,
    },
    WidgetDef {
        id: "dashboards.analytics.usersKpi",
        module: "dashboards",
        title: "Users",
        description: Some("Users created in a period, compared with the previous one"),
        default_size: WidgetSize::Sm,
        default_enabled: false,
        default_settings: Some(|| serde_json::json!({"dateRange": "this_month"})),
        features: &[ANALYTICS_VIEW, "auth.users.list"],
        category: Some("analytics"),
        icon: Some("users"),
        supports_refresh: true,
    },
    WidgetDef {
        id: "dashboards.analytics.activityTrend",
        module: "dashboards",
        title: "Activity",
        description: Some("Recorded actions per day"),
        default_size: WidgetSize::Lg,
        default_enabled: false,
        default_settings: Some(
            || serde_json::json!({"dateRange": "last_30_days", "granularity": "day"}),
        ),
        features: &[ANALYTICS_VIEW, "audit_logs.view_tenant"],
        category: Some("analytics"),
        icon: Some("activity"),
        supports_refresh: true,
    },
];

/// Registers both modules, the default grants (superadmin and admin:
/// `dashboards.*` and `analytics.view`; employee: view, configure and
/// `analytics.view`), the home page, this crate's widgets and the seeder of
/// the default roles' widgets.
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.register(ANALYTICS_MODULE, ANALYTICS_FEATURES)?;
    for role in ["superadmin", "admin"] {
        registry.add_role_defaults(role, &["dashboards.*", ANALYTICS_VIEW]);
    }
    registry.add_role_defaults("employee", &[VIEW, CONFIGURE, ANALYTICS_VIEW]);
    registry.register_nav(NAV);
    for widget in WIDGETS {
        registry.add_widget(widget.clone())?;
    }
    registry.add_seeder(Arc::new(seeder::RoleWidgetsSeeder));
    Ok(())
}

/// Mounts the routes (under `/api`). Everything they need is app data of
/// every module: the database, the registry and the account interfaces.
pub fn configure(cfg: &mut ServiceConfig) {
    cfg.service(routes::layout::get_layout)
        .service(routes::layout::put_layout)
        .service(routes::layout::patch_layout_item)
        .service(routes::catalog::widget_catalog)
        .service(routes::roles::get_role_widgets)
        .service(routes::roles::put_role_widgets)
        .service(routes::users::get_user_widgets)
        .service(routes::users::put_user_widgets)
        .service(routes::data::widget_data_batch)
        .service(routes::data::widget_data);
}

/// The module descriptor the server mounts, with the context's accounts for
/// the widget assignments' undo and redo.
pub fn module(services: &stoa_acl::Services) -> stoa_module::Module {
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers(register)
        .handlers(handlers_with(services.accounts.clone()))
        .routes(|_, _| Ok(std::sync::Arc::new(configure)))
}
