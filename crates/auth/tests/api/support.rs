//! Shared helpers: an app with auth and directory mounted, login, requests.

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use stoa_auth::AuthConfig;
use stoa_auth::testing::{self, Tenant};
use stoa_testkit::{TestApp, TestResponse};

pub use stoa_testkit::requests::delete;

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
        // Every auth test runs with kept list answers, as the server does:
        // a stale answer would fail the tests that read a list twice.
        .reads_with(testing::reads)
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

/// An app with auth, directory and audit logs (undo/redo over HTTP).
pub async fn start_admin() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    let commands = stoa_directory::commands::handlers()
        .into_iter()
        .chain(stoa_auth::commands::handlers())
        .fold(
            stoa_core::command::CommandRegistry::new(),
            stoa_core::command::CommandRegistry::handler,
        );
    stoa_testkit::app()
        .module_with(testing::module)
        .reads_with(testing::reads)
        .module(stoa_directory::configure)
        .module(stoa_audit_logs::configure(
            std::sync::Arc::new(commands),
            std::sync::Arc::new(stoa_auth::PgAccounts),
        ))
        .start()
        .await
}

/// A tenant whose default roles also carry the audit-log grants.
pub async fn seed(db: &stoa_core::db::Db, name: &str, domain: &str) -> Tenant {
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_audit_logs::register(&mut registry).unwrap();
    testing::seed_tenant_with(db, &registry, name, domain).await
}

/// The undo token of the `x-om-operation` header of a response.
pub fn undo_token(res: &TestResponse) -> String {
    let raw = res.header("x-om-operation").expect("x-om-operation header");
    let encoded = raw.strip_prefix("omop:").expect("omop: prefix");
    let mut bytes = Vec::new();
    let mut it = encoded.bytes();
    while let Some(b) = it.next() {
        if b == b'%' {
            let hex = [it.next().unwrap(), it.next().unwrap()];
            bytes.push(u8::from_str_radix(std::str::from_utf8(&hex).unwrap(), 16).unwrap());
        } else {
            bytes.push(b);
        }
    }
    let op: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    op["undoToken"].as_str().expect("undo token").to_string()
}

/// Undoes the operation holding `token` as the bearer of `auth`.
pub async fn undo<S: stoa_testkit::AppService>(
    app: &TestApp<S>,
    auth: &str,
    token: &str,
) -> TestResponse {
    app.send(post_json(
        "/api/audit_logs/audit-logs/actions/undo",
        auth,
        serde_json::json!({"undoToken": token}),
    ))
    .await
}

/// Creates an organization named "Branch" under `parent` as `token` (201);
/// returns its id.
pub async fn branch<S: stoa_testkit::AppService>(
    app: &TestApp<S>,
    token: &str,
    parent: uuid::Uuid,
) -> uuid::Uuid {
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            token,
            serde_json::json!({"name": "Branch", "parentId": parent}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    res.json()["id"].as_str().unwrap().parse().unwrap()
}

/// The id of the role called `name`, as the caller sees it in the role list.
pub async fn role_named<S: stoa_testkit::AppService>(
    app: &TestApp<S>,
    token: &str,
    name: &str,
) -> String {
    let res = app
        .send(get(&format!("/api/auth/roles?search={name}"), token))
        .await;
    res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("role {name} in {}", res.text()))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Action-log entries of `command`: (resource id, tenant, snapshot after, context).
pub async fn logged(
    db: &stoa_core::db::Db,
    command: &str,
) -> Vec<(
    Option<String>,
    Option<uuid::Uuid>,
    Option<serde_json::Value>,
    Option<serde_json::Value>,
)> {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use stoa_core::command::schema::action_logs;
    let mut conn = db.conn().await.unwrap();
    action_logs::table
        .filter(action_logs::command_id.eq(command))
        .order(action_logs::created_at.asc())
        .select((
            action_logs::resource_id,
            action_logs::tenant_id,
            action_logs::snapshot_after,
            action_logs::context_json,
        ))
        .load(&mut *conn)
        .await
        .unwrap()
}
