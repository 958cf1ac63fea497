//! Shared helpers: an app with auth and directory mounted, login, requests.

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
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

pub fn form(path: &str, body: &str) -> TestRequest {
    TestRequest::post()
        .uri(path)
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .set_payload(body.to_string())
}

pub fn login_form(email: &str, password: &str) -> TestRequest {
    form(
        "/api/auth/login",
        &format!("email={email}&password={password}"),
    )
}

pub fn bearer(req: TestRequest, token: &str) -> TestRequest {
    req.insert_header(("authorization", format!("Bearer {token}")))
}

pub fn get(path: &str, token: &str) -> TestRequest {
    bearer(TestRequest::get().uri(path), token)
}

pub fn post_json(path: &str, token: &str, body: serde_json::Value) -> TestRequest {
    bearer(TestRequest::post().uri(path).set_json(body), token)
}

pub fn put_json(path: &str, token: &str, body: serde_json::Value) -> TestRequest {
    bearer(TestRequest::put().uri(path).set_json(body), token)
}

/// Every `Set-Cookie` header of a response.
pub fn cookies(res: &TestResponse) -> Vec<String> {
    res.headers
        .get_all("set-cookie")
        .filter_map(|v| v.to_str().ok().map(String::from))
        .collect()
}

/// The value of cookie `name` set by a response.
pub fn cookie(res: &TestResponse, name: &str) -> Option<String> {
    cookies(res).into_iter().find_map(|c| {
        let first = c.split(';').next()?.to_string();
        let (k, v) = first.split_once('=')?;
        (k == name).then(|| v.to_string())
    })
}

pub fn keys() -> stoa_auth::tokens::TokenKeys {
    stoa_auth::tokens::TokenKeys::new(AuthConfig::for_tests().jwt_secret.expose())
}
