//! Shared helpers: an app with auth, directory and preferences mounted.

use std::sync::Arc;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use stoa_acl::Registry;
use stoa_auth::AuthConfig;
use stoa_auth::testing::{self, Tenant};
use stoa_core::db::Db;
use stoa_core::http::ApiConfigurator;
use stoa_preferences::PreferencesState;
use stoa_testkit::TestApp;

pub use stoa_testkit::requests::{bearer, get, post_json, put_json};

/// The features and pages of stoa-auth and the directory
/// (`stoa_auth::base_registry`) and of this crate.
pub fn registry() -> Registry {
    let mut registry = match stoa_auth::base_registry() {
        Ok(registry) => registry,
        Err(err) => panic!("registry: {err}"),
    };
    if let Err(err) = stoa_preferences::register(&mut registry) {
        panic!("registry: {err}");
    }
    registry
}

/// This crate's state over `db` with test settings: the consent key of
/// stoa-auth's test JWT secret and stoa-auth's users.
pub fn state(db: &Db) -> PreferencesState {
    PreferencesState::new(
        db.clone(),
        AuthConfig::for_tests().jwt_secret.expose(),
        Arc::new(stoa_auth::PgAccounts),
    )
}

/// stoa-auth (with a registry holding this crate's feature and pages; it
/// provides the authenticator and the registry as app data) and this crate's
/// routes, with test settings.
pub fn module(db: &Db) -> ApiConfigurator {
    let auth = stoa_auth::configure(testing::state_with_registry(db, registry(), |_| {}));
    let preferences = stoa_preferences::configure(state(db));
    Arc::new(move |cfg| {
        auth(cfg);
        preferences(cfg);
    })
}

/// An app with stoa-auth, this crate and the directory mounted.
pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    stoa_testkit::app()
        .module_with(module)
        .module(stoa_directory::configure)
        .reads_with(testing::reads)
        .start()
        .await
}

pub async fn acme(db: &Db) -> Tenant {
    testing::seed_tenant(db, "Acme Corp", "acme.com").await
}
