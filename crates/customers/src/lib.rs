//! stoa-customers: customer deals, their pipelines and pipeline stages.
//!
//! CRUD of deals (list in one statement with a capped total and keyset
//! cursor, optimistic locking, both the `/{id}` and the collection style),
//! pipelines and stages; bulk owner and stage changes as background jobs
//! acting as their creator ([`jobs`]); the `customers:deals` analytics
//! source, widgets and rule entity ([`slots`]); demo data ([`seed`]). Every
//! write is an undoable command ([`commands`]). Users are looked up through
//! the `stoa_acl::UserDirectory` the server hands to [`configure`]. See
//! README.md for the endpoints.
#![doc = include_str!("../README.md")]

pub mod ai_tools;
pub mod commands;
pub mod dto;
pub mod error;
pub mod jobs;
pub mod model;
pub mod operations;
pub mod owners;
pub mod queries;
pub mod record_target;
pub mod routes;
pub mod rule_writes;
pub mod schema;
pub mod seed;
pub mod service;
pub mod slots;

use std::sync::Arc;

use actix_web::web;
use stoa_acl::{
    Feature, ModuleInfo, NavEntry, NavPlacement, Registry, RegistryError, UserDirectory,
};
use stoa_core::http::ServiceConfig;

pub use commands::handlers;
pub use error::CustomersError;

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "customers",
    title: "Customers",
};

pub const DEALS_VIEW: &str = "customers.deals.view";
pub const DEALS_MANAGE: &str = "customers.deals.manage";
pub const PIPELINES_VIEW: &str = "customers.pipelines.view";
pub const PIPELINES_MANAGE: &str = "customers.pipelines.manage";

pub const FEATURES: &[Feature] = &[
    Feature {
        id: DEALS_VIEW,
        title: "View deals",
        module: "customers",
    },
    Feature {
        id: DEALS_MANAGE,
        title: "Create, change and delete deals (bulk changes included)",
        module: "customers",
    },
    Feature {
        id: PIPELINES_VIEW,
        title: "View pipelines and stages",
        module: "customers",
    },
    Feature {
        id: PIPELINES_MANAGE,
        title: "Manage pipelines and stages",
        module: "customers",
    },
];

pub const NAV: &[NavEntry] = &[
    NavEntry {
        id: "customers.deals",
        module: "customers",
        placement: NavPlacement::Main,
        group_id: "customers",
        group_label: "Customers",
        href: "/backend/customers/deals",
        title: "Deals",
        features: &[DEALS_VIEW],
        order: 30,
        icon: Some("handshake"),
    },
    NavEntry {
        id: "customers.pipelines",
        module: "customers",
        placement: NavPlacement::Settings,
        group_id: "settings.customers",
        group_label: "Customers",
        href: "/backend/config/customers/pipelines",
        title: "Pipelines",
        features: &[PIPELINES_MANAGE],
        order: 100,
        icon: Some("git-branch"),
    },
];

/// Registers the features, the default grants (superadmin and admin:
/// `customers.*`; employee: deals view and manage, pipelines view, as the
/// reference grants), the pages and the registry slots.
/// `users` checks the owners the AI tools and the rule writer set.
pub fn register(
    registry: &mut Registry,
    users: &Arc<dyn UserDirectory>,
) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.add_role_defaults("superadmin", &["customers.*"]);
    registry.add_role_defaults("admin", &["customers.*"]);
    registry.add_role_defaults("employee", &[DEALS_VIEW, DEALS_MANAGE, PIPELINES_VIEW]);
    registry.register_nav(NAV);
    registry.add_analytics_source(slots::DEALS_SOURCE)?;
    for widget in slots::widgets() {
        registry.add_widget(widget)?;
    }
    registry.add_rule_entity(slots::DEAL_RULES)?;
    registry.add_rule_writer(rule_writes::deal_writer(users.clone()))?;
    registry.add_record_target(record_target::deal_target())?;
    registry.add_demo_data(seed::demo_data())?;
    for tool in ai_tools::tools(users) {
        registry.add_ai_tool(tool)?;
    }
    Ok(())
}

/// The module's migrations: the `migrations/` folders named
/// `<version>_customers_<what>`. They reference identity tables they do not
/// own, which must exist before the first of them (2026-11-28-110000):
/// `tenants (id)`, `organizations (id)` and `users (id, tenant_id)` (stoa's
/// are stoa-directory's and stoa-auth's; an embedder without them creates
/// its own, see examples/embed-deals).
pub fn migrations() -> stoa_core::db::Migrations {
    stoa_core::db::Migrations::module("customers")
}

/// The bulk jobs' handlers (the server chains them into `job_handlers`).
pub fn job_handlers(users: Arc<dyn UserDirectory>) -> Vec<Arc<dyn stoa_jobs::JobHandler>> {
    vec![
        Arc::new(jobs::BulkDeals::owner(users.clone())),
        Arc::new(jobs::BulkDeals::stage(users)),
    ]
}

/// Mounts the routes (under `/api`). `users` checks deal owners (stoa-auth's
/// accounts, handed over by the server). The bulk routes come before
/// `/customers/deals/{id}`.
pub fn configure(
    users: Arc<dyn UserDirectory>,
) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    move |cfg: &mut ServiceConfig| {
        cfg.app_data(web::Data::from(users.clone()))
            .service(routes::deals::bulk_owner::bulk_update_owner)
            .service(routes::deals::bulk_stage::bulk_update_stage)
            .service(routes::deals::list::list_deals)
            .service(routes::deals::create::create_deal)
            .service(routes::deals::update_by_body::update_deal_by_body)
            .service(routes::deals::delete_by_query::delete_deal_by_query)
            .service(routes::deals::get::get_deal)
            .service(routes::deals::update::update_deal)
            .service(routes::deals::delete::delete_deal)
            .service(routes::pipelines::list::list_pipelines)
            .service(routes::pipelines::create::create_pipeline)
            .service(routes::pipelines::update::update_pipeline)
            .service(routes::pipelines::update_by_body::update_pipeline_by_body)
            .service(routes::pipelines::delete::delete_pipeline)
            .service(routes::pipelines::delete_by_query::delete_pipeline_by_query)
            .service(routes::stages::list::list_stages)
            .service(routes::stages::create::create_stage)
            .service(routes::stages::reorder::reorder_stages)
            .service(routes::stages::update::update_stage)
            .service(routes::stages::update_by_body::update_stage_by_body)
            .service(routes::stages::delete::delete_stage)
            .service(routes::stages::delete_by_query::delete_stage_by_query);
    }
}

/// The module descriptor the server mounts, with the context's accounts as
/// the user directory every path checks deal owners in: the routes, the
/// bulk jobs, the AI tools, the rule writer, undo and redo.
pub fn module(services: &stoa_acl::Services) -> stoa_module::Module {
    let users: Arc<dyn UserDirectory> = services.accounts.clone();
    let (slots, jobs) = (users.clone(), users.clone());
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers(move |registry| register(registry, &slots))
        .handlers(handlers(users.clone()))
        .routes(move |_, _| Ok(Arc::new(configure(users.clone()))))
        .jobs(move |_| job_handlers(jobs.clone()))
}
