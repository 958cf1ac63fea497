//! stoa-api-keys: API keys for machine clients.
//!
//! Owns the `api_keys` table, the `/api_keys/keys` endpoints (list, create,
//! delete) and [`ApiKeyAuthenticator`], the `Authenticator` that stoa-auth's
//! `AuthState` hands key credentials to (`x-api-key`, `Authorization: ApiKey`,
//! or a bearer value in the key format). Secrets are shown once; only their
//! prefix and SHA-256 are stored. A key never carries more than its creator
//! holds, checked at creation and again on every request. See README.md.
#![doc = include_str!("../README.md")]

pub mod authenticator;
pub mod caller;
pub mod commands;
pub mod config;
pub mod creators;
pub mod directory;
pub mod error;
pub mod model;
pub mod operations;
pub mod routes;
pub mod schema;
pub mod secret;
pub mod service;

#[doc(hidden)]
use std::sync::Arc;

use actix_web::web;
use stoa_acl::{
    Feature, ModuleInfo, NavEntry, NavPlacement, OrganizationDirectory, Registry, RegistryError,
    RoleDirectory,
};
use stoa_core::http::ServiceConfig;

pub use authenticator::ApiKeyAuthenticator;
pub use caller::KeyCaller;
pub use config::ApiKeysConfig;
pub use creators::KeyCreators;
pub use directory::PgKeyDirectory;
pub use error::ApiKeysError;

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "api_keys",
    title: "API Keys",
};

pub const FEATURES: &[Feature] = &[
    Feature {
        id: "api_keys.view",
        title: "View API keys",
        module: "api_keys",
    },
    Feature {
        id: "api_keys.create",
        title: "Create API keys",
        module: "api_keys",
    },
    Feature {
        id: "api_keys.delete",
        title: "Delete API keys",
        module: "api_keys",
    },
];

/// The settings page listing API keys.
pub const NAV: &[NavEntry] = &[NavEntry {
    id: "api_keys.keys",
    module: "api_keys",
    placement: NavPlacement::Settings,
    group_id: "settings.auth",
    group_label: "Users & access",
    href: "/backend/api-keys",
    title: "API Keys",
    features: &["api_keys.view"],
    order: 40,
    icon: Some("key"),
}];

/// Registers the features, the admin role's default grant (`api_keys.*`) and
/// the settings page.
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.add_role_defaults("admin", &["api_keys.*"]);
    registry.register_nav(NAV);
    Ok(())
}

/// Mounts the API-key routes (under `/api`). `roles` looks up the roles a key
/// is given (stoa-auth's, handed over by the server), for the grant boundary;
/// `organizations` checks a key's tenant and organization and names them in
/// lists (stoa-directory's, handed over by the server).
pub fn configure(
    roles: Arc<dyn RoleDirectory>,
    organizations: Arc<dyn OrganizationDirectory>,
) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    move |cfg: &mut ServiceConfig| {
        cfg.app_data(web::Data::from(roles.clone()))
            .app_data(web::Data::from(organizations.clone()))
            .service(routes::list::list_keys)
            .service(routes::create::create_key)
            .service(routes::delete::delete_key);
    }
}

/// The module descriptor the server mounts: keys are checked against the
/// context's roles and organizations.
pub fn module() -> stoa_module::Module {
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers(register)
        .routes(|services, _| {
            let organizations = services.organizations.clone();
            Ok(Arc::new(configure(
                services.accounts.clone(),
                organizations,
            )))
        })
}
