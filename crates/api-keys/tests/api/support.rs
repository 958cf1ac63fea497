//! Shared helpers: an app with auth (keys plugged in), directory and API keys
//! mounted; seeding; requests with each credential form.

use std::sync::{Arc, OnceLock};

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_acl::Registry;
use stoa_api_keys::ApiKeyAuthenticator;
use stoa_auth::schema::{role_acls, roles, user_roles};
use stoa_auth::{AuthConfig, AuthState, PgAccounts};
use stoa_core::db::Db;
use stoa_core::http::ApiConfigurator;
use stoa_testkit::{AppService, TestApp, TestResponse};
use uuid::Uuid;

pub use stoa_auth::testing::{Tenant, token_for, user_with_features};
pub use stoa_testkit::requests::{delete, get, post_json};
pub use stoa_testkit::sql;

pub const KEYS: &str = "/api/api_keys/keys";

/// The auth and directory features plus this module's.
pub fn registry() -> Registry {
    let mut registry = stoa_auth::base_registry().unwrap_or_default();
    if let Err(err) = stoa_api_keys::register(&mut registry) {
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

pub async fn start() -> (
    TestApp<
        impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
    >,
    Arc<ApiKeyAuthenticator>,
) {
    let slot: Arc<OnceLock<Arc<ApiKeyAuthenticator>>> = Arc::default();
    let put = slot.clone();
    let app = stoa_testkit::app()
        .module_with(move |db| {
            let keys = ApiKeyAuthenticator::new(db.clone(), Arc::new(PgAccounts));
            let _ = put.set(keys.clone());
            auth_module(db, keys)
        })
        .module(stoa_directory::configure)
        .module(stoa_api_keys::configure(
            Arc::new(PgAccounts),
            Arc::new(stoa_directory::PgDirectory),
        ))
        .start()
        .await;
    let keys = slot.get().cloned().expect("authenticator built");
    (app, keys)
}

/// A tenant seeded like `stoa init --demo`, whose admin role has `api_keys.*`.
pub async fn seed(db: &Db, name: &str, domain: &str) -> Tenant {
    stoa_auth::testing::seed_tenant_with(db, &registry(), name, domain).await
}

/// Acme and Globex.
pub async fn two_tenants(db: &Db) -> (Tenant, Tenant) {
    (
        seed(db, "Acme Corp", "acme.com").await,
        seed(db, "Globex", "globex.com").await,
    )
}

/// A role of `tenant` granting `features` (restricted to `organizations`).
pub async fn role(
    db: &Db,
    tenant: Uuid,
    name: &str,
    features: &[&str],
    organizations: Option<Vec<Uuid>>,
) -> Uuid {
    let mut conn = db.conn().await.unwrap();
    let id: Uuid = diesel::insert_into(roles::table)
        .values((roles::tenant_id.eq(tenant), roles::name.eq(name)))
        .returning(roles::id)
        .get_result(&mut *conn)
        .await
        .unwrap();
    diesel::insert_into(role_acls::table)
        .values((
            role_acls::role_id.eq(id),
            role_acls::tenant_id.eq(tenant),
            role_acls::features.eq(features.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
            role_acls::organizations.eq(organizations),
        ))
        .execute(&mut *conn)
        .await
        .unwrap();
    id
}

/// Replaces the features of a role's ACL.
pub async fn set_role_features(db: &Db, role: Uuid, features: &[&str]) {
    let mut conn = db.conn().await.unwrap();
    diesel::update(role_acls::table.filter(role_acls::role_id.eq(role)))
        .set(role_acls::features.eq(features.iter().map(|s| s.to_string()).collect::<Vec<_>>()))
        .execute(&mut *conn)
        .await
        .unwrap();
}

/// Replaces the organization restriction of a role's ACL.
pub async fn set_role_organizations(db: &Db, role: Uuid, organizations: Option<Vec<Uuid>>) {
    let mut conn = db.conn().await.unwrap();
    diesel::update(role_acls::table.filter(role_acls::role_id.eq(role)))
        .set(role_acls::organizations.eq(organizations))
        .execute(&mut *conn)
        .await
        .unwrap();
}

/// The role `user_with_features` made for `email`.
pub async fn role_of(db: &Db, user: Uuid) -> Uuid {
    let mut conn = db.conn().await.unwrap();
    user_roles::table
        .filter(user_roles::user_id.eq(user))
        .select(user_roles::role_id)
        .first(&mut *conn)
        .await
        .unwrap()
}

/// A child organization of `parent`.
pub async fn organization(db: &Db, tenant: Uuid, parent: Uuid, name: &str) -> Uuid {
    let mut conn = db.conn().await.unwrap();
    use stoa_directory::DirectoryService;
    stoa_directory::PgDirectory
        .create_organization(
            &mut conn,
            tenant,
            serde_json::from_value(json!({"name": name, "parentId": parent})).unwrap(),
        )
        .await
        .unwrap()
}

/// Creates a key (201 expected); returns the response body.
pub async fn create_key<S: AppService>(app: &TestApp<S>, token: &str, body: Value) -> Value {
    let res = app.send(post_json(KEYS, token, body.clone())).await;
    assert_eq!(res.status, 201, "{body}: {}", res.text());
    res.json()
}

/// The secret of a new key of `token`'s caller with `roles`.
pub async fn key_with_roles<S: AppService>(
    app: &TestApp<S>,
    token: &str,
    roles: &[Uuid],
) -> String {
    let body = create_key(app, token, json!({"name": "test key", "roles": roles})).await;
    body["secret"].as_str().unwrap().to_string()
}

/// `GET path` with the key in `x-api-key`.
pub fn get_x_api_key(path: &str, secret: &str) -> TestRequest {
    TestRequest::get()
        .uri(path)
        .insert_header(("x-api-key", secret))
}

/// `GET path` with `Authorization: ApiKey <secret>`.
pub fn get_apikey_scheme(path: &str, secret: &str) -> TestRequest {
    TestRequest::get()
        .uri(path)
        .insert_header(("authorization", format!("ApiKey {secret}")))
}

/// The features of `features` the credential holds (through `/auth/feature-check`).
pub async fn granted<S: AppService>(
    app: &TestApp<S>,
    credential: &str,
    features: &[&str],
) -> Vec<String> {
    let res = app
        .send(post_json(
            "/api/auth/feature-check",
            credential,
            json!({ "features": features }),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    serde_json::from_value(res.json()["granted"].clone()).unwrap()
}

/// Action-log entries of a command: (actor, resource id, snapshot before, after, undo token).
pub async fn action_logs(
    db: &Db,
    command: &str,
) -> Vec<(
    Option<Uuid>,
    Option<String>,
    Option<Value>,
    Option<Value>,
    Option<String>,
)> {
    use stoa_core::command::schema::action_logs as logs;
    let mut conn = db.conn().await.unwrap();
    logs::table
        .filter(logs::command_id.eq(command))
        .order(logs::created_at.asc())
        .select((
            logs::actor_user_id,
            logs::resource_id,
            logs::snapshot_before,
            logs::snapshot_after,
            logs::undo_token,
        ))
        .load(&mut *conn)
        .await
        .unwrap()
}

/// Live keys in the table.
pub async fn live_keys(db: &Db) -> i64 {
    let mut conn = db.conn().await.unwrap();
    stoa_api_keys::schema::api_keys::table
        .filter(stoa_api_keys::schema::api_keys::deleted_at.is_null())
        .count()
        .get_result(&mut *conn)
        .await
        .unwrap()
}

pub fn assert_unauthorized(res: &TestResponse, why: &str) {
    assert_eq!(res.status, 401, "{why}: {}", res.text());
    assert_eq!(res.json(), json!({"error": "Unauthorized"}), "{why}");
}
