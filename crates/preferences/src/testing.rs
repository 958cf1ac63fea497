//! Helpers for integration tests of modules whose tests call the preferences
//! routes. Not used by the server.

use std::sync::Arc;

use stoa_core::db::Db;
use stoa_core::http::ApiConfigurator;

/// stoa-auth (with a registry holding this crate's feature and pages) and the
/// preferences routes, with test settings: use instead of
/// `stoa_auth::testing::module`.
pub fn module(db: &Db) -> ApiConfigurator {
    let registry = crate::base_registry().unwrap_or_default();
    let auth = stoa_auth::configure(stoa_auth::testing::state_with_registry(
        db,
        registry,
        |_| {},
    ));
    Arc::new(move |cfg| {
        auth(cfg);
        crate::configure(cfg);
    })
}
