//! stoa-progress: the progress records clients poll, their endpoints, and
//! the records the job queue (stoa-jobs) keeps for the jobs it runs. See
//! README.md.
#![doc = include_str!("../README.md")]

pub mod bench;
pub mod dto;
pub mod enqueue;
pub mod error;
pub mod operations;
pub mod queries;
pub mod records;
pub mod routes;
pub mod schema;
pub mod service;
pub mod sweep;

use stoa_acl::{Feature, ModuleInfo, NavEntry, NavPlacement, Registry, RegistryError};
use stoa_core::http::ServiceConfig;

use stoa_jobs::{JobHandler, Schedule};

pub use enqueue::{enqueue_job, enqueue_job_with, enqueue_scoped};
pub use error::ProgressError;
pub use records::{ProgressRecords, records};

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "progress",
    title: "Progress",
};

pub const FEATURES: &[Feature] = &[
    Feature {
        id: "progress.view",
        title: "View progress jobs",
        module: "progress",
    },
    Feature {
        id: "progress.create",
        title: "Create progress jobs",
        module: "progress",
    },
    Feature {
        id: "progress.update",
        title: "Update progress jobs",
        module: "progress",
    },
    Feature {
        id: "progress.cancel",
        title: "Cancel progress jobs",
        module: "progress",
    },
    Feature {
        id: "progress.manage",
        title: "Manage progress jobs",
        module: "progress",
    },
];

/// The progress module's backend page (a settings page).
pub const NAV: &[NavEntry] = &[NavEntry {
    id: "progress.jobs",
    module: "progress",
    placement: NavPlacement::Settings,
    group_id: "system",
    group_label: "System",
    href: "/backend/settings/jobs",
    title: "Background jobs",
    features: &["progress.view"],
    order: 10,
    icon: Some("loader"),
}];

/// Registers the features (admin: all; employee: view) and the backend page.
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.add_role_defaults("admin", &["progress.*"]);
    registry.add_role_defaults("employee", &["progress.view"]);
    registry.register_nav(NAV);
    Ok(())
}

/// Mounts the routes (under `/api`) and registers progress's records as
/// `web::Data<dyn stoa_jobs::JobRecords>`, where modules' bulk routes find
/// them (`stoa_jobs::enqueue_job`): where progress is mounted, every queued
/// job gets a record clients poll.
pub fn configure(cfg: &mut ServiceConfig) {
    let records: actix_web::web::Data<dyn stoa_jobs::JobRecords> =
        actix_web::web::Data::from(records());
    cfg.app_data(records)
        .service(routes::active::active)
        .service(routes::list::list)
        .service(routes::create::create)
        .service(routes::detail::detail)
        .service(routes::update::update)
        .service(routes::update_by_body::update_by_body)
        .service(routes::cancel::cancel)
        .service(routes::cancel_by_query::cancel_by_query);
}

/// The module's job handlers: the stale sweep (the queue's own are
/// `stoa_jobs::handlers()`).
pub fn handlers() -> Vec<std::sync::Arc<dyn JobHandler>> {
    vec![std::sync::Arc::new(sweep::SweepStale)]
}

/// The module's recurring jobs (the queue's own are `stoa_jobs::schedules()`).
pub fn schedules() -> Vec<Schedule> {
    sweep::schedules()
}

/// The module's migrations (`progress_jobs`): the `migrations/` folders named
/// `<version>_progress_<what>`.
pub fn migrations() -> stoa_core::db::Migrations {
    stoa_core::db::Migrations::module("progress")
}

/// The module descriptor the server mounts: progress records and their
/// sweep.
pub fn module() -> stoa_module::Module {
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers(register)
        .routes(|_, _| Ok(std::sync::Arc::new(configure)))
        .jobs(|_| handlers())
        .schedules(|| Ok(schedules()))
}
