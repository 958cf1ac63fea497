//! stoa-business-rules: rules and rule sets, the condition language
//! ([`condition`]), the engine ([`engine`]) run by the execute endpoints, by
//! domain events after commit ([`trigger`]) and, for GUARD rules, inside
//! every write's transaction ([`guard`]); the execution log; webhook calls
//! from the job queue ([`webhook`]). See README.md for the endpoints.
#![doc = include_str!("../README.md")]

pub mod actions;
pub mod authors;
pub mod cache;
pub mod commands;
pub mod condition;
pub mod dto;
pub mod engine;
pub mod error;
pub mod guard;
pub mod model;
pub mod operations;
pub mod platform;
pub mod routes;
pub mod schema;
pub mod secrets;
pub mod service;
pub mod trigger;
pub mod webhook;
pub mod writes;

use std::sync::Arc;

use stoa_acl::{Feature, ModuleInfo, NavEntry, NavPlacement, Registry, RegistryError};
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::http::ServiceConfig;
use stoa_core::outbound::Outbound;

pub use commands::handlers;
pub use error::RulesError;

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "business_rules",
    title: "Business rules",
};

pub const VIEW: &str = "business_rules.view";
pub const MANAGE: &str = "business_rules.manage";
pub const EXECUTE: &str = "business_rules.execute";
pub const VIEW_LOGS: &str = "business_rules.view_logs";
pub const MANAGE_SETS: &str = "business_rules.manage_sets";
/// The API-key feature `platform-call-options` also requires (it lists keys'
/// callable operations for `CALL_OPEN_MERCATO`).
pub const API_KEYS_CREATE: &str = "api_keys.create";

pub const FEATURES: &[Feature] = &[
    Feature {
        id: VIEW,
        title: "View business rules and rule sets",
        module: "business_rules",
    },
    Feature {
        id: MANAGE,
        title: "Create, change and delete business rules",
        module: "business_rules",
    },
    Feature {
        id: EXECUTE,
        title: "Execute business rules",
        module: "business_rules",
    },
    Feature {
        id: VIEW_LOGS,
        title: "View business rule execution logs",
        module: "business_rules",
    },
    Feature {
        id: MANAGE_SETS,
        title: "Manage rule sets and their members",
        module: "business_rules",
    },
];

pub const NAV: &[NavEntry] = &[NavEntry {
    id: "business_rules.rules",
    module: "business_rules",
    placement: NavPlacement::Settings,
    group_id: "settings.business_rules",
    group_label: "Business rules",
    href: "/backend/rules",
    title: "Business rules",
    features: &[VIEW],
    order: 120,
    icon: Some("scale"),
}];

/// Registers the features, the default grants (superadmin and admin:
/// `business_rules.*`; employee: none, as the reference), the page and the
/// write guard that runs GUARD rules on every write.
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.add_role_defaults("superadmin", &["business_rules.*"]);
    registry.add_role_defaults("admin", &["business_rules.*"]);
    registry.register_nav(NAV);
    registry.add_write_guard(Arc::new(guard::RulesGuard));
    Ok(())
}

/// The webhook job's handler (the server chains it into `job_handlers`);
/// `keys` decrypts the rules' webhook secrets (`Services::keys`).
pub fn job_handlers(outbound: Outbound, keys: Arc<KeyRing>) -> Vec<Arc<dyn stoa_jobs::JobHandler>> {
    vec![Arc::new(webhook::WebhookJob::new(outbound, keys))]
}

/// The event trigger (the server lists it in `subscribers`); `registry`
/// gives the rule writers (`SET_FIELD`) and the write guards their writes
/// pass, `platform` the in-process caller of `CALL_OPEN_MERCATO`
/// (`Services::platform`), `creators` each rule's author as they stand when
/// it runs (`Services::creators`, [`authors`]).
pub fn subscribers(
    db: Db,
    registry: Arc<Registry>,
    platform: stoa_acl::PlatformSlot,
    creators: Arc<dyn stoa_acl::CreatorResolver>,
) -> Vec<Arc<dyn stoa_core::command::outbox::Subscriber>> {
    vec![Arc::new(trigger::RuleTrigger::new(
        db, registry, platform, creators,
    ))]
}

/// Mounts the routes (under `/api`). Literal paths come before `{id}` ones.
pub fn configure(cfg: &mut ServiceConfig) {
    cfg.service(routes::rules::list_rules)
        .service(routes::rules::create_rule)
        .service(routes::rules::update_rule)
        .service(routes::rules::delete_rule)
        .service(routes::rules::get_rule)
        .service(routes::rules::rotate_webhook_secret)
        .service(routes::sets::list_sets)
        .service(routes::sets::create_set)
        .service(routes::sets::update_set)
        .service(routes::sets::delete_set)
        .service(routes::sets::get_set)
        .service(routes::members::add_member)
        .service(routes::members::update_member)
        .service(routes::members::remove_member)
        .service(routes::execute::execute)
        .service(routes::execute::execute_rule)
        .service(routes::logs::list_logs)
        .service(routes::logs::get_log)
        .service(routes::options::call_options);
}

/// The module descriptor the server mounts: rules run on domain events
/// after commit (its subscribers) and call webhooks as jobs; a rule's undo
/// and redo check its content with the context, as its routes do.
pub fn module(services: &stoa_acl::Services) -> stoa_module::Module {
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers(register)
        .handlers(handlers(Arc::new(services.clone())))
        .routes(|_, _| Ok(Arc::new(configure)))
        .jobs(|services| job_handlers(services.outbound.clone(), services.keys.clone()))
        .subscribers(|services| {
            let registry = services.registry.clone();
            let creators = services.creators.clone();
            subscribers(
                services.db.clone(),
                registry,
                services.platform.clone(),
                creators,
            )
        })
}
