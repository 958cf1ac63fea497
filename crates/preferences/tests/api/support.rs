//! Shared helpers: an app with auth, directory and preferences mounted.

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use stoa_auth::testing::{self, Tenant};
use stoa_testkit::TestApp;

pub use stoa_testkit::requests::{bearer, get, post_json, put_json};

/// An app with stoa-auth (whose state the preferences routes use), this
/// crate and the directory mounted.
pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    stoa_testkit::app()
        .module_with(stoa_preferences::testing::module)
        .module(stoa_directory::configure)
        .start()
        .await
}

pub async fn acme(db: &stoa_core::db::Db) -> Tenant {
    testing::seed_tenant(db, "Acme Corp", "acme.com").await
}
