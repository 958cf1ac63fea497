//! stoa-audit-logs: reading the action and access logs the command bus and the
//! modules write, exporting them as CSV, and undo/redo through the
//! [`CommandRegistry`](stoa_core::command::CommandRegistry). See README.md.
#![doc = include_str!("../README.md")]

pub mod csv;
pub mod dto;
pub mod error;
pub mod operations;
pub mod queries;
pub mod retention;
pub mod routes;
pub mod seed;
pub mod service;

use std::sync::Arc;

use actix_web::web;
use stoa_acl::{
    Feature, ModuleInfo, NavEntry, NavPlacement, Registry, RegistryError, UserDirectory,
};
use stoa_core::command::CommandRegistry;
use stoa_core::config::FromEnv;
use stoa_core::http::ServiceConfig;

pub use error::AuditLogError;

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "audit_logs",
    title: "Audit logs",
};

pub const FEATURES: &[Feature] = &[
    Feature {
        id: "audit_logs.view_self",
        title: "View own audit logs",
        module: "audit_logs",
    },
    Feature {
        id: "audit_logs.view_tenant",
        title: "View the tenant's audit logs",
        module: "audit_logs",
    },
    Feature {
        id: "audit_logs.undo_self",
        title: "Undo own actions",
        module: "audit_logs",
    },
    Feature {
        id: "audit_logs.undo_tenant",
        title: "Undo anyone's actions in the tenant",
        module: "audit_logs",
    },
    Feature {
        id: "audit_logs.redo_self",
        title: "Redo own actions",
        module: "audit_logs",
    },
    Feature {
        id: "audit_logs.redo_tenant",
        title: "Redo anyone's actions in the tenant",
        module: "audit_logs",
    },
];

/// The audit log's backend page in the admin navigation.
pub const NAV: &[NavEntry] = &[NavEntry {
    id: "audit_logs.actions",
    module: "audit_logs",
    placement: NavPlacement::Main,
    group_id: "audit_logs",
    group_label: "Audit",
    href: "/backend/audit-logs",
    title: "Audit logs",
    features: &["audit_logs.view_self"],
    order: 10,
    icon: Some("history"),
}];

/// Registers the features, default grants (admin: all; employee: view and
/// undo own) and the backend page.
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.add_role_defaults("admin", &["audit_logs.*"]);
    registry.add_role_defaults(
        "employee",
        &["audit_logs.view_self", "audit_logs.undo_self"],
    );
    registry.register_nav(NAV);
    registry.add_analytics_source(ACTION_LOGS_ANALYTICS)?;
    Ok(())
}

/// Action-log entries as dashboards may count them (the tenant's, which
/// `audit_logs.view_tenant` lists).
pub const ACTION_LOGS_ANALYTICS: stoa_acl::slots::AnalyticsSource = {
    use stoa_acl::slots::{AnalyticsField, AnalyticsSource, FieldKind};
    AnalyticsSource {
        entity_type: "audit_logs:action_logs",
        module: "audit_logs",
        relation: "action_logs stoa_a",
        tenant_column: "stoa_a.tenant_id",
        organization_column: Some("stoa_a.organization_id"),
        date_field: "createdAt",
        fields: &[
            AnalyticsField {
                name: "id",
                sql: "stoa_a.id",
                kind: FieldKind::Text,
            },
            AnalyticsField {
                name: "createdAt",
                sql: "stoa_a.created_at",
                kind: FieldKind::Date,
            },
            AnalyticsField {
                name: "commandId",
                sql: "stoa_a.command_id",
                kind: FieldKind::Text,
            },
            AnalyticsField {
                name: "actionType",
                sql: "stoa_a.action_type",
                kind: FieldKind::Text,
            },
            AnalyticsField {
                name: "resourceKind",
                sql: "stoa_a.resource_kind",
                kind: FieldKind::Text,
            },
            AnalyticsField {
                name: "actorUserId",
                sql: "stoa_a.actor_user_id",
                kind: FieldKind::Text,
            },
        ],
        features: &["audit_logs.view_tenant"],
        read_model: None,
    }
};

/// Mounts the routes; `commands` holds every module's undo/redo handlers,
/// `users` names the actors of the entries (stoa-auth's, handed over by the
/// server).
pub fn configure(
    commands: Arc<CommandRegistry>,
    users: Arc<dyn UserDirectory>,
) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    move |cfg: &mut ServiceConfig| {
        cfg.app_data(web::Data::from(commands.clone()))
            .app_data(web::Data::from(users.clone()))
            .service(routes::list_actions::list_actions)
            .service(routes::export_actions::export_actions)
            .service(routes::undo::undo)
            .service(routes::redo::redo)
            .service(routes::list_access::list_access);
    }
}

/// The module descriptor the server mounts: its undo and redo routes
/// dispatch through every module's handlers; retention (settings from the
/// environment, a malformed one stops start-up) runs as a recurring job.
pub fn module() -> stoa_module::Module {
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers(register)
        .routes(|services, commands| {
            let users = services.accounts.clone();
            Ok(Arc::new(configure(commands.clone(), users)))
        })
        .jobs(|_| retention::handlers())
        .schedules(|| Ok(retention::RetentionConfig::from_env()?.schedules()))
}
