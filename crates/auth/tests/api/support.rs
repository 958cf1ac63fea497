//! Shared helpers: an app with auth and directory mounted, login, requests.

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use stoa_auth::AuthConfig;
use stoa_auth::testing::{self, Tenant};
use stoa_testkit::{TestApp, TestResponse};

pub use stoa_auth::testing::PASSWORD;

pub async fn start_with(
    tweak: impl FnOnce(&mut AuthConfig) + 'static,
) -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    stoa_testkit::app()
        .module_with(move |db| {
            std::sync::Arc::new(stoa_auth::configure(testing::state_with(db, tweak)))
        })
        .module(stoa_directory::configure)
        .start()
        .await
}

pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    start_with(|_| {}).await
}

pub async fn acme(db: &stoa_core::db::Db) -> Tenant {
    testing::seed_tenant(db, "Acme Corp", "acme.com").await
}

pub use stoa_testkit::requests::{bearer, form, get, post_json, put_json};

pub fn login_form(email: &str, password: &str) -> actix_web::test::TestRequest {
    form(
        "/api/auth/login",
        &format!("email={email}&password={password}"),
    )
}

/// Every `Set-Cookie` header of a response.
pub fn cookies(res: &TestResponse) -> Vec<String> {
    res.cookies()
}

/// The value of cookie `name` set by a response.
pub fn cookie(res: &TestResponse, name: &str) -> Option<String> {
    res.cookie(name)
}

pub fn keys() -> stoa_auth::tokens::TokenKeys {
    stoa_auth::tokens::TokenKeys::new(AuthConfig::for_tests().jwt_secret.expose())
}
