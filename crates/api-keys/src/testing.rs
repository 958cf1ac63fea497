//! Helpers for integration tests that sign in with API keys. Not used by the
//! server.

use std::sync::Arc;

use stoa_acl::Registry;
use stoa_auth::{AuthConfig, AuthState};
use stoa_core::db::Db;
use stoa_core::http::ApiConfigurator;

use crate::ApiKeyAuthenticator;

/// The auth and directory features plus this module's.
pub fn registry() -> Registry {
    let mut registry = stoa_auth::base_registry().unwrap_or_default();
    if let Err(err) = crate::register(&mut registry) {
        panic!("register api keys: {err}");
    }
    registry
}

/// stoa-auth's configurator with test settings and `keys` plugged in.
pub fn auth_module(db: &Db, keys: Arc<ApiKeyAuthenticator>) -> ApiConfigurator {
    let state = match AuthState::new(db.clone(), AuthConfig::for_tests(), Arc::new(registry())) {
        Ok(state) => state.with_api_keys(keys),
        Err(err) => panic!("auth state: {err}"),
    };
    Arc::new(stoa_auth::configure(Arc::new(state)))
}
