//! stoa-onboarding: self-service sign-up. A visitor submits the form, gets a
//! verification link by e-mail, and opening it creates their workspace (a
//! tenant, its root organization and an admin) through the shared
//! provisioning, then prepares demo data in a progress job. Enabled only with
//! `SELF_SERVICE_ONBOARDING_ENABLED=true`. Owns `onboarding_requests`; what it
//! needs of accounts comes through `stoa_acl::Onboarding`.
#![doc = include_str!("../README.md")]

pub mod commands;
pub mod config;
pub mod dto;
pub mod error;
pub mod html;
pub mod jobs;
pub mod mail;
pub mod model;
pub mod operations;
pub mod routes;
pub mod schema;
pub mod service;
pub mod state;
pub mod token;

use std::sync::Arc;

use actix_web::web;
use stoa_acl::{ModuleInfo, Registry, RegistryError};
use stoa_core::config::FromEnv;
use stoa_core::http::ServiceConfig;

pub use config::OnboardingConfig;
pub use error::OnboardingError;
pub use jobs::{job_handlers, schedules};
pub use state::OnboardingState;

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "onboarding",
    title: "Onboarding",
};

/// Registers the module (no features: every route is public, gated by
/// `SELF_SERVICE_ONBOARDING_ENABLED`).
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(MODULE, &[])?;
    Ok(())
}

/// Mounts the routes (under `/api`) with the module's state.
pub fn configure(
    state: Arc<OnboardingState>,
) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    move |cfg: &mut ServiceConfig| {
        cfg.app_data(web::Data::from(state.clone()))
            .service(routes::submit::submit)
            .service(routes::verify::verify)
            .service(routes::status::status);
    }
}

/// The module descriptor the server mounts: the consent key derives from
/// `secret` (`STOA_JWT_SECRET`); `config` `None` reads
/// `SELF_SERVICE_ONBOARDING_*` from the environment when mounted.
pub fn module(secret: &str, config: Option<OnboardingConfig>) -> stoa_module::Module {
    let secret = secret.to_string();
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers(register)
        .routes(move |services, _| {
            let config = match &config {
                Some(config) => config.clone(),
                None => OnboardingConfig::from_env().map_err(|e| e.to_string())?,
            };
            let state = OnboardingState::new(
                services.db.clone(),
                config,
                services.registry.clone(),
                services.onboarding.clone(),
                &secret,
            );
            Ok(Arc::new(configure(Arc::new(state))))
        })
        .jobs(|services| job_handlers(&services.registry))
        .schedules(|| Ok(schedules()))
}
