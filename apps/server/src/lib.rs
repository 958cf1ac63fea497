//! The `stoa` server: the list of mounted modules and the commands of the CLI.
//! No business logic lives here; every endpoint belongs to a module crate (or to
//! stoa-core's system endpoints).

use stoa_core::http::ApiConfigurator;

pub mod commands;

/// Every module's routes, in mount order. Each new module crate adds its
/// `configure` here (and its features to the registry).
pub fn configurators() -> Vec<ApiConfigurator> {
    // Modules are appended here as they are built, e.g.
    // `std::sync::Arc::new(stoa_devices::configure)`.
    Vec::new()
}

/// The OpenAPI document of the whole API.
pub fn openapi() -> utoipa::openapi::OpenApi {
    stoa_core::http::openapi_doc(&configurators(), stoa_core::BUILD_VERSION)
}
