use std::sync::Arc;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::{AuthContext, Authenticator, Credentials, ResolvedAcl, authenticator_data};
use stoa_auth::AuthState;
use stoa_core::AppError;
use stoa_core::command::CommandRegistry;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_directory::DirectoryService;
use stoa_testkit::{AppService, TestApp, TestResponse};
use uuid::Uuid;

pub use stoa_auth::testing::{Tenant, token_for, user_with_features};
pub use stoa_testkit::operation;
pub use stoa_testkit::requests::{delete, get, post_json, put_json};

/// Every device feature.
pub const ALL: [&str; 3] = ["devices.view", "devices.manage", "devices.admin"];

/// Stands in for the API-key authenticator another module will provide:
/// `x-api-key: <tenant uuid>` (acting alone) or `<tenant uuid>:<user uuid>`
/// (acting as that user) is a key of that tenant granted `devices.*`. Sessions
/// go to stoa-auth as usual.
struct TestKeys(Arc<AuthState>);

impl Authenticator for TestKeys {
    fn authenticate<'a>(
        &'a self,
        credentials: &'a Credentials,
    ) -> BoxFuture<'a, Result<AuthContext, AppError>> {
        Box::pin(async move {
            let Some(key) = &credentials.api_key else {
                return self.0.authenticate(credentials).await;
            };
            let (tenant, user) = match key.split_once(':') {
                Some((t, u)) => (t, Some(u)),
                None => (key.as_str(), None),
            };
            let tenant: Uuid = tenant.parse().map_err(|_| AppError::unauthorized())?;
            let user: Option<Uuid> = match user {
                Some(u) => Some(u.parse().map_err(|_| AppError::unauthorized())?),
                None => None,
            };
            Ok(AuthContext::for_api_key(tenant, Uuid::new_v4())
                .with_user(user)
                .with_acl(ResolvedAcl {
                    features: vec!["devices.*".into()],
                    ..Default::default()
                }))
        })
    }
}

/// The undo/redo handlers the server registers (devices' among them).
pub fn commands() -> CommandRegistry {
    stoa_devices::handlers()
        .into_iter()
        .chain(stoa_directory::commands::handlers())
        .fold(CommandRegistry::new(), CommandRegistry::handler)
}

pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    stoa_testkit::app()
        .module_with(|db| {
            let state = stoa_auth::testing::state_with(db, |_| {});
            let auth = stoa_auth::configure(state.clone());
            let keys: Arc<dyn Authenticator> = Arc::new(TestKeys(state));
            Arc::new(move |cfg: &mut stoa_core::http::ServiceConfig| {
                auth(cfg);
                // Replaces stoa-auth's authenticator (same app-data type).
                cfg.app_data(authenticator_data(keys.clone()));
            })
        })
        .module(stoa_audit_logs::configure(
            Arc::new(commands()),
            Arc::new(stoa_auth::PgAccounts),
        ))
        .module(stoa_devices::configure(
            keys(),
            Arc::new(stoa_auth::PgAccounts),
        ))
        .start()
        .await
}

/// A tenant whose default roles carry the device and audit-log grants.
pub async fn seed(db: &Db, name: &str, domain: &str) -> Tenant {
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_audit_logs::register(&mut registry).unwrap();
    stoa_devices::register(&mut registry).unwrap();
    stoa_auth::testing::seed_tenant_with(db, &registry, name, domain).await
}

/// A child organization of the tenant's root.
pub async fn child_org(db: &Db, tenant: &Tenant, name: &str) -> Uuid {
    let mut conn = db.conn().await.unwrap();
    stoa_directory::PgDirectory
        .create_organization(
            &mut conn,
            tenant.tenant_id,
            stoa_directory::dto::CreateOrganization {
                tenant_id: Some(tenant.tenant_id),
                name: name.into(),
                slug: None,
                logo_url: None,
                logo_preserve_aspect_ratio: None,
                is_active: None,
                parent_id: Some(tenant.organization_id),
                child_ids: None,
            },
        )
        .await
        .unwrap()
}

/// A request authenticated with a test API key (see [`TestKeys`]).
pub fn with_key(req: TestRequest, key: &str) -> TestRequest {
    req.insert_header(("x-api-key", key.to_string()))
}

/// Registers a device (201 expected); returns its id and the operation.
pub async fn register<S: AppService>(app: &TestApp<S>, token: &str, body: Value) -> (Uuid, Value) {
    let res = app
        .send(post_json("/api/devices", token, body.clone()))
        .await;
    assert_eq!(res.status, 201, "{body}: {}", res.text());
    (
        res.json()["id"].as_str().unwrap().parse().unwrap(),
        operation(&res),
    )
}

/// The caller's device `id` as `GET /devices` lists it (`None` when not listed).
pub async fn own_device<S: AppService>(app: &TestApp<S>, token: &str, id: Uuid) -> Option<Value> {
    let res = app
        .send(get(&format!("/api/devices?ids={id}"), token))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .next()
        .cloned()
}

/// A list item without `updated_at` (which every write moves, undo included).
pub fn without_updated_at(mut item: Value) -> Value {
    item.as_object_mut().unwrap().remove("updated_at");
    item
}

/// The key the test app encrypts push tokens with.
pub const TEST_KEY: [u8; 32] = [42; 32];

/// The test app's key ring ([`TEST_KEY`], no older keys).
pub fn keys() -> Arc<KeyRing> {
    Arc::new(KeyRing::new(&TEST_KEY, &[]))
}

/// What the table holds for a device: (push_token decrypted, push_provider,
/// deleted_at set?). Asserts on the way that the column holds a ciphertext
/// under the test key, never the plaintext.
pub async fn stored(db: &Db, id: Uuid) -> (Option<String>, Option<String>, bool) {
    let (raw, provider, deleted) = stored_raw(db, id).await;
    let id_meta = meta(db, id).await;
    let token = raw.map(|raw| {
        let ring = keys();
        assert!(
            ring.is_current(&raw),
            "not encrypted with the current key: {raw}"
        );
        let (tenant, record) = bound_to(&id_meta);
        let binding = stoa_devices::secrets::binding(tenant, &record);
        let plain = ring.decrypt(&raw, &binding).unwrap();
        assert!(!raw.contains(&plain), "the column holds the plaintext");
        plain
    });
    (token, provider, deleted)
}

/// The raw `push_token` column, `push_provider` and whether the row is deactivated.
pub async fn stored_raw(db: &Db, id: Uuid) -> (Option<String>, Option<String>, bool) {
    use stoa_devices::schema::user_devices::dsl as d;
    let mut conn = db.conn().await.unwrap();
    let (token, provider, deleted): (Option<String>, Option<String>, Option<time::OffsetDateTime>) =
        d::user_devices
            .filter(d::id.eq(id))
            .select((d::push_token, d::push_provider, d::deleted_at))
            .first(&mut *conn)
            .await
            .unwrap();
    (token, provider, deleted.is_some())
}

pub async fn undo<S: AppService>(app: &TestApp<S>, token: &str, op: &Value) -> TestResponse {
    app.send(post_json(
        "/api/audit_logs/audit-logs/actions/undo",
        token,
        json!({"undoToken": op["undoToken"]}),
    ))
    .await
}

/// A timestamp of a response.
pub fn ts(value: &Value) -> time::OffsetDateTime {
    time::OffsetDateTime::parse(
        value
            .as_str()
            .unwrap_or_else(|| panic!("not a timestamp: {value}")),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap()
}

/// A device row's tenant, user and client device id.
pub async fn meta(db: &Db, id: Uuid) -> (Uuid, Uuid, String) {
    use stoa_devices::schema::user_devices::dsl as d;
    let mut conn = db.conn().await.unwrap();
    d::user_devices
        .filter(d::id.eq(id))
        .select((d::tenant_id, d::user_id, d::device_id))
        .first(&mut *conn)
        .await
        .unwrap()
}

/// What a device's token is bound to: its tenant and record key.
pub fn bound_to((tenant, user, device_id): &(Uuid, Uuid, String)) -> (Uuid, String) {
    (*tenant, stoa_devices::secrets::record_key(*user, device_id))
}
