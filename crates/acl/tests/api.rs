//! `OptionalAuth` against the real authenticator (stoa-auth with API keys
//! plugged in) and a real database: anonymous only without credentials.
use std::sync::Arc;

use actix_web::test::TestRequest;
use actix_web::{HttpResponse, web};
use serde_json::{Value, json};
use stoa_acl::OptionalAuth;
use stoa_acl::Registry;
use stoa_api_keys::ApiKeyAuthenticator;
use stoa_auth::tokens::TokenKeys;
use stoa_auth::{AuthConfig, AuthState, PgAccounts};
use stoa_core::http::ServiceConfig;
use stoa_testkit::requests::{bearer, post_json};
use stoa_testkit::{AppService, TestApp, TestResponse};

const WHO: &str = "/api/test/public/whoami";

/// A public route that says who called it.
async fn whoami(caller: OptionalAuth) -> HttpResponse {
    match caller.as_ref() {
        None => HttpResponse::Ok().json(json!({"anonymous": true})),
        Some(ctx) => HttpResponse::Ok().json(json!({
            "anonymous": false,
            "userId": ctx.user_id,
            "apiKeyId": ctx.api_key_id,
            "tenantId": ctx.tenant_id,
        })),
    }
}

fn routes(cfg: &mut ServiceConfig) {
    cfg.route("/test/public/whoami", web::get().to(whoami));
}

/// The auth and directory features plus the API keys'.
fn registry() -> Registry {
    let mut registry = stoa_auth::base_registry().unwrap_or_default();
    if let Err(err) = stoa_api_keys::register(&mut registry) {
        panic!("register api keys: {err}");
    }
    registry
}

async fn start() -> TestApp<impl AppService> {
    stoa_testkit::app()
        .module_with(|db| {
            let keys = ApiKeyAuthenticator::new(db.clone(), Arc::new(PgAccounts));
            let state =
                match AuthState::new(db.clone(), AuthConfig::for_tests(), Arc::new(registry())) {
                    Ok(state) => state.with_api_keys(keys),
                    Err(err) => panic!("auth state: {err}"),
                };
            Arc::new(stoa_auth::configure(Arc::new(state)))
        })
        .module(stoa_api_keys::configure(
            Arc::new(PgAccounts),
            Arc::new(stoa_directory::PgDirectory),
        ))
        .module(routes)
        .start()
        .await
}

async fn who<S: AppService>(app: &TestApp<S>, req: TestRequest) -> TestResponse {
    app.send(req.uri(WHO)).await
}

fn assert_401(res: &TestResponse, what: &str) {
    assert_eq!(res.status, 401, "{what}: {}", res.text());
    assert!(res.json()["error"].is_string(), "{what}: JSON error");
}

/// `token` re-signed with an expiry an hour ago (same session, same key).
#[expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test helper fails the test by panicking"
)]
fn expired(token: &str) -> String {
    let keys = TokenKeys::new(stoa_auth::AuthConfig::for_tests().jwt_secret.expose());
    let mut claims = keys.verify(token).expect("a valid token");
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    claims.iat = now - 7200;
    claims.exp = now - 3600;
    keys.sign(&claims).unwrap()
}

#[actix_web::test]
async fn anonymous_only_without_credentials() {
    let app = start().await;
    let acme =
        stoa_auth::testing::seed_tenant_with(&app.db, &registry(), "Acme Corp", "acme.com").await;
    let token = stoa_auth::testing::token_for(&app.db, acme.admin).await;

    // Nothing sent: anonymous (an empty header or cookie is nothing, too).
    let res = who(&app, TestRequest::get()).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!({"anonymous": true}));
    let res = who(
        &app,
        TestRequest::get().cookie(actix_web::cookie::Cookie::new("auth_token", "")),
    )
    .await;
    assert_eq!(res.json()["anonymous"], true);

    // A valid session, as a bearer token or as the cookie: the caller.
    for req in [
        bearer(TestRequest::get(), &token),
        TestRequest::get().cookie(actix_web::cookie::Cookie::new("auth_token", token.clone())),
    ] {
        let res = who(&app, req).await;
        assert_eq!(res.status, 200, "{}", res.text());
        let body: Value = res.json();
        assert_eq!(body["anonymous"], false);
        assert_eq!(body["userId"], json!(acme.admin));
        assert_eq!(body["tenantId"], json!(acme.tenant_id));
    }

    // A valid API key: the key.
    let res = app
        .send(post_json(
            "/api/api_keys/keys",
            &token,
            json!({"name": "public files"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let key = res.json();
    let secret = key["secret"].as_str().unwrap().to_string();
    let res = who(
        &app,
        TestRequest::get().insert_header(("x-api-key", secret.as_str())),
    )
    .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["apiKeyId"], key["id"]);
    assert_eq!(res.json()["tenantId"], json!(acme.tenant_id));

    // Anything sent that does not authenticate: 401, never anonymous.
    let (prefix, _) = secret.split_once('.').unwrap();
    let bad_key = format!("{prefix}.{}", "0".repeat(48));
    let cases = [
        (
            "expired token",
            bearer(TestRequest::get(), &expired(&token)),
        ),
        ("forged token", bearer(TestRequest::get(), "not.a.jwt")),
        (
            "expired cookie",
            TestRequest::get().cookie(actix_web::cookie::Cookie::new(
                "auth_token",
                expired(&token),
            )),
        ),
        (
            "wrong key secret",
            TestRequest::get().insert_header(("x-api-key", bad_key.as_str())),
        ),
        (
            "unknown key",
            TestRequest::get().insert_header(("authorization", "ApiKey omk_00000000.00")),
        ),
        (
            "unknown scheme",
            TestRequest::get().insert_header(("authorization", "Basic dXNlcjpwdw==")),
        ),
        (
            "empty bearer",
            TestRequest::get().insert_header(("authorization", "Bearer ")),
        ),
        (
            "empty key header",
            TestRequest::get().insert_header(("x-api-key", "")),
        ),
    ];
    for (what, req) in cases {
        assert_401(&who(&app, req).await, what);
    }

    // A revoked session's token stops working too.
    let res = app
        .send(bearer(TestRequest::post().uri("/api/auth/logout"), &token))
        .await;
    assert!(
        res.status.is_success() || res.status.is_redirection(),
        "{}",
        res.status
    );
    assert_401(
        &who(&app, bearer(TestRequest::get(), &token)).await,
        "logged out",
    );
}

/// The extractor does not need the authenticator when nothing was sent
/// (a module mounted without stoa-auth still serves anonymous callers), and
/// answers 500, not anonymous, when credentials come and nobody can check them.
#[actix_web::test]
async fn without_an_authenticator() {
    let app = stoa_testkit::app().module(routes).start().await;
    let res = who(&app, TestRequest::get()).await;
    assert_eq!(res.json(), json!({"anonymous": true}));
    let res = who(&app, bearer(TestRequest::get(), "anything")).await;
    assert_eq!(res.status, 500);
}
