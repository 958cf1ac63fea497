//! The test app (auth, audit logs for undo, progress for polling, customers),
//! tenants whose roles carry the customers grants, and helpers.

use std::sync::Arc;
use std::time::Duration;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use serde_json::{Value, json};
use stoa_acl::AccessMatrix;
use stoa_core::command::{CommandRegistry, WriteGuard};
use stoa_core::db::Db;
use stoa_core::http::{AccessPolicy, ApiConfigurator};
use stoa_jobs::{WorkerConfig, Workers};
use stoa_testkit::{AppService, TestApp, TestResponse};
use uuid::Uuid;

pub use stoa_auth::testing::{Tenant, token_for, user_with_features};
pub use stoa_testkit::requests::{delete, get, post_json, put_json};
pub use stoa_testkit::{count, sql};

pub const DEALS: &str = "/api/customers/deals";
pub const PIPELINES: &str = "/api/customers/pipelines";
pub const STAGES: &str = "/api/customers/pipeline-stages";

/// The undo/redo handlers the server registers (customers' among them).
pub fn commands() -> CommandRegistry {
    stoa_customers::handlers(stoa_auth::testing::user_directory())
        .into_iter()
        .chain(stoa_directory::commands::handlers())
        .fold(CommandRegistry::new(), CommandRegistry::handler)
}

pub fn users() -> Arc<stoa_auth::PgAccounts> {
    Arc::new(stoa_auth::PgAccounts)
}

/// The app as the server mounts it: auth, audit logs (undo), progress
/// (polling) and customers, behind the access matrix of their declared
/// operations (so errors come in each route's declared shape and envelope).
pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    stoa_testkit::app()
        .server_with(|db| {
            let auth = stoa_auth::testing::state_with_registry(db, registry(), |_| {});
            let mut declared = registry();
            for operations in [
                stoa_auth::operations::OPERATIONS,
                stoa_audit_logs::operations::OPERATIONS,
                stoa_progress::operations::OPERATIONS,
                stoa_customers::operations::OPERATIONS,
            ] {
                declared.register_operations(operations).unwrap();
            }
            let access: Arc<dyn AccessPolicy> =
                Arc::new(AccessMatrix::new(declared.operations(), auth.clone()));
            let modules: Vec<ApiConfigurator> = vec![
                Arc::new(stoa_auth::configure(auth)),
                Arc::new(stoa_audit_logs::configure(Arc::new(commands()), users())),
                Arc::new(stoa_progress::configure),
                Arc::new(stoa_customers::configure(users())),
            ];
            (modules, Some(access))
        })
        .reads_with(stoa_auth::testing::reads)
        .start()
        .await
}

/// The registry of the modules the tests mount.
pub fn registry() -> stoa_acl::Registry {
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_audit_logs::register(&mut registry).unwrap();
    stoa_progress::register(&mut registry).unwrap();
    stoa_customers::register(&mut registry, &stoa_auth::testing::user_directory()).unwrap();
    registry
}

/// A tenant whose default roles carry the customers grants.
pub async fn seed(db: &Db, name: &str, domain: &str) -> Tenant {
    stoa_auth::testing::seed_tenant_with(db, &registry(), name, domain).await
}

/// A child organization of the tenant's root.
pub async fn child_org(db: &Db, tenant: &Tenant, name: &str) -> Uuid {
    stoa_auth::testing::organization(db, tenant.tenant_id, tenant.organization_id, name).await
}

/// An id from a JSON body.
pub fn id_of(body: &Value) -> Uuid {
    body["id"].as_str().expect("an id").parse().expect("a uuid")
}

/// Creates a pipeline (201 expected).
pub async fn pipeline<S: AppService>(app: &TestApp<S>, token: &str, name: &str) -> Uuid {
    let res = app
        .send(post_json(PIPELINES, token, json!({"name": name})))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    id_of(&res.json())
}

/// Creates a stage of `pipeline` (201 expected).
pub async fn stage<S: AppService>(
    app: &TestApp<S>,
    token: &str,
    pipeline: Uuid,
    label: &str,
) -> Uuid {
    let res = app
        .send(post_json(
            STAGES,
            token,
            json!({"pipelineId": pipeline, "label": label}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    id_of(&res.json())
}

/// Creates a deal (201 expected); returns its id.
pub async fn deal<S: AppService>(app: &TestApp<S>, token: &str, body: Value) -> Uuid {
    let res = app.send(post_json(DEALS, token, body.clone())).await;
    assert_eq!(res.status, 201, "{body}: {}", res.text());
    id_of(&res.json())
}

/// A deal as `GET /customers/deals/{id}` shows it (`deal` object), or the status.
pub async fn read<S: AppService>(app: &TestApp<S>, token: &str, id: Uuid) -> Result<Value, u16> {
    let res = app.send(get(&format!("{DEALS}/{id}"), token)).await;
    if res.status == 200 {
        Ok(res.json()["deal"].clone())
    } else {
        Err(res.status.as_u16())
    }
}

pub async fn undo<S: AppService>(app: &TestApp<S>, token: &str, undo_token: &str) -> TestResponse {
    app.send(post_json(
        "/api/audit_logs/audit-logs/actions/undo",
        token,
        json!({"undoToken": undo_token}),
    ))
    .await
}

/// The undo token of a response's `x-om-operation`.
pub fn undo_token(res: &TestResponse) -> String {
    res.operation()
        .expect("x-om-operation")
        .undo_token
        .expect("an undo token")
}

/// Workers running the customers jobs as their creators, with `guard` (if
/// any) among the registry's write guards.
pub fn workers(db: &Db, guard: Option<Arc<dyn WriteGuard>>) -> Workers {
    let mut registry = registry();
    if let Some(guard) = guard {
        registry.add_write_guard(guard);
    }
    let services = stoa_auth::testing::services(db, registry);
    Workers::new(db.clone(), stoa_customers::job_handlers(users()), config())
        .with_services(&services)
        .with_records(stoa_progress::records())
}

pub fn config() -> WorkerConfig {
    WorkerConfig {
        count: 1,
        visibility: Duration::from_millis(1000),
        poll: Duration::from_millis(20),
        schedule_tick: Duration::from_millis(20),
    }
}

/// The progress record of a job.
pub async fn job<S: AppService>(app: &TestApp<S>, token: &str, id: &Value) -> Value {
    let id = id.as_str().expect("a progress job id");
    let res = app
        .send(get(&format!("/api/progress/jobs/{id}"), token))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}

/// Seeds `n` demo deals of the demo pipeline in the tenant's root organization.
pub async fn demo_deals(db: &Db, acme: &Tenant, n: i64) {
    let mut conn = db.conn().await.unwrap();
    stoa_customers::seed::demo(
        &mut conn,
        acme.tenant_id,
        acme.organization_id,
        &[acme.admin],
        n,
        |_| {},
    )
    .await
    .unwrap();
}
