//! The `stoa` server: the list of mounted modules and the commands of the CLI.
//! No business logic lives here; every endpoint belongs to a module crate (or to
//! stoa-core's system endpoints).

use std::sync::Arc;
use std::time::Duration;

use stoa_acl::{Registry, RegistryError};
use stoa_auth::{AuthConfig, AuthState};
use stoa_core::db::Db;
use stoa_core::http::ApiConfigurator;

pub mod commands;

/// Every module's features (the catalog behind `GET /api/auth/features`).
pub fn registry() -> Result<Registry, RegistryError> {
    // Modules register in dependency order; each new module crate adds itself here.
    stoa_auth::base_registry()
}

/// Every module's routes, in mount order. Each new module crate adds its
/// `configure` here (and its features to [`registry`]).
pub fn configurators(db: &Db, auth: AuthConfig) -> Result<Vec<ApiConfigurator>, String> {
    let registry = Arc::new(registry().map_err(|e| e.to_string())?);
    let auth = Arc::new(AuthState::new(db.clone(), auth, registry).map_err(|e| e.to_string())?);
    Ok(vec![
        Arc::new(stoa_auth::configure(auth)),
        Arc::new(stoa_directory::configure),
    ])
}

/// The OpenAPI document of the whole API.
pub fn openapi() -> Result<utoipa::openapi::OpenApi, String> {
    // Documentation needs no database: the pool never connects.
    let db = Db::from_url(
        "postgres://docs@127.0.0.1:1/none",
        1,
        Duration::from_millis(1),
    )
    .map_err(|e| e.to_string())?;
    let configurators = configurators(&db, AuthConfig::for_tests())?;
    Ok(stoa_core::http::openapi_doc(
        &configurators,
        stoa_core::BUILD_VERSION,
    ))
}
