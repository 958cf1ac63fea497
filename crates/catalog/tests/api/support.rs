//! Shared helpers: an app with auth, audit logs (undo), progress (polling)
//! and the catalog mounted; tenants whose roles carry the catalog grants; a
//! write guard refusing products titled `Protected…`; job workers.

use std::sync::Arc;
use std::time::Duration;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::{AccessMatrix, Registry};
use stoa_core::AppError;
use stoa_core::command::{CommandRegistry, GuardInput, Verdict, WriteGuard};
use stoa_core::db::Db;
use stoa_core::http::{AccessPolicy, ApiConfigurator};
use stoa_jobs::{WorkerConfig, Workers};
use stoa_testkit::{AppService, TestApp, TestResponse};
use uuid::Uuid;

pub use stoa_auth::testing::{Tenant, token_for, user_with_features};
pub use stoa_testkit::requests::{delete, get, post_json, put_json};
pub use stoa_testkit::{count, sql};

pub const PRODUCTS: &str = "/api/catalog/products";
pub const BULK: &str = "/api/catalog/bulk-delete";

/// Refuses every catalog write whose product (before or after) is titled
/// `Protected…`: stands in for a business rule.
pub struct ProtectedTitles;

fn protected(snapshot: Option<&Value>) -> bool {
    snapshot
        .and_then(|s| s["title"].as_str())
        .is_some_and(|t| t.starts_with("Protected"))
}

impl WriteGuard for ProtectedTitles {
    fn id(&self) -> &str {
        "test.protected_titles"
    }
    fn applies_to(&self, command_id: &str, _: Option<Uuid>) -> bool {
        command_id.starts_with("catalog.products.")
    }
    fn check<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        input: &'a GuardInput<'a>,
    ) -> BoxFuture<'a, Result<Verdict, AppError>> {
        let refuse = protected(input.before()) || protected(input.after());
        Box::pin(async move {
            Ok(if refuse {
                Verdict::Refuse("Protected products stay".into())
            } else {
                Verdict::Allow
            })
        })
    }
}

/// The features of auth, audit logs, progress and the catalog, with
/// `guards` as the write guards.
pub fn registry_with(guards: Vec<Arc<dyn WriteGuard>>) -> Registry {
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_audit_logs::register(&mut registry).unwrap();
    stoa_progress::register(&mut registry).unwrap();
    stoa_catalog::register(&mut registry, &stoa_auth::testing::organization_directory()).unwrap();
    for guard in guards {
        registry.add_write_guard(guard);
    }
    registry
}

/// [`registry_with`] the [`ProtectedTitles`] guard.
pub fn registry() -> Registry {
    registry_with(vec![Arc::new(ProtectedTitles)])
}

/// The undo/redo handlers (the catalog's among them).
pub fn commands() -> CommandRegistry {
    stoa_catalog::handlers()
        .into_iter()
        .fold(CommandRegistry::new(), CommandRegistry::handler)
}

/// The app as the server mounts it: auth, audit logs (undo), progress
/// (polling) and the catalog, behind the access matrix of their declared
/// operations (so errors come in each route's declared shape), with kept
/// list answers served before authentication.
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
                stoa_catalog::operations::OPERATIONS,
            ] {
                declared.register_operations(operations).unwrap();
            }
            let access: Arc<dyn AccessPolicy> =
                Arc::new(AccessMatrix::new(declared.operations(), auth.clone()));
            let modules: Vec<ApiConfigurator> = vec![
                Arc::new(stoa_auth::configure(auth)),
                Arc::new(stoa_audit_logs::configure(
                    Arc::new(commands()),
                    Arc::new(stoa_auth::PgAccounts),
                )),
                Arc::new(stoa_progress::configure),
                Arc::new(stoa_catalog::configure(Arc::new(
                    stoa_directory::PgDirectory,
                ))),
            ];
            (modules, Some(access))
        })
        .reads_with(stoa_auth::testing::reads)
        .start()
        .await
}

/// A tenant whose default roles carry the catalog, progress and audit-log
/// grants (admin: all; employee: products view and manage).
pub async fn seed(db: &Db, name: &str, domain: &str) -> Tenant {
    stoa_auth::testing::seed_tenant_with(db, &registry(), name, domain).await
}

/// A child organization of the tenant's root.
pub async fn child_org(db: &Db, tenant: &Tenant, name: &str) -> Uuid {
    stoa_auth::testing::organization(db, tenant.tenant_id, tenant.organization_id, name).await
}

/// Creates a product (201 expected); returns its id and the response.
pub async fn create<S: AppService>(
    app: &TestApp<S>,
    token: &str,
    body: Value,
) -> (Uuid, TestResponse) {
    let res = app.send(post_json(PRODUCTS, token, body.clone())).await;
    assert_eq!(res.status, 201, "{body}: {}", res.text());
    (res.json()["id"].as_str().unwrap().parse().unwrap(), res)
}

/// A product as `GET /catalog/products/{id}` shows it (`None`: 404).
pub async fn product<S: AppService>(app: &TestApp<S>, token: &str, id: Uuid) -> Option<Value> {
    let res = app.send(get(&format!("{PRODUCTS}/{id}"), token)).await;
    match res.status.as_u16() {
        200 => Some(res.json()["item"].clone()),
        404 => None,
        other => panic!("GET product: {other} {}", res.text()),
    }
}

pub async fn undo<S: AppService>(app: &TestApp<S>, token: &str, undo_token: &str) -> TestResponse {
    app.send(post_json(
        "/api/audit_logs/audit-logs/actions/undo",
        token,
        json!({ "undoToken": undo_token }),
    ))
    .await
}

pub async fn redo<S: AppService>(app: &TestApp<S>, token: &str, log_id: &str) -> TestResponse {
    app.send(post_json(
        "/api/audit_logs/audit-logs/actions/redo",
        token,
        json!({ "logId": log_id }),
    ))
    .await
}

/// Products in the whole table.
pub async fn product_count(db: &Db) -> i64 {
    count(db, "SELECT count(*) AS n FROM catalog_products").await
}

/// Inserts `n` products `<prefix>-<i>` (SKU the same) into `organization`
/// with plain SQL; returns their ids in SKU order.
pub async fn insert_products(
    db: &Db,
    tenant: &Tenant,
    organization: Uuid,
    prefix: &str,
    n: i64,
) -> Vec<Uuid> {
    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = diesel::sql_types::Uuid)]
        id: Uuid,
    }
    let mut conn = db.conn().await.unwrap();
    let rows: Vec<Id> = diesel::sql_query(
        "INSERT INTO catalog_products (tenant_id, organization_id, title, sku, price_amount, price_currency) \
         SELECT $1, $2, $3 || '-' || lpad(i::text, 6, '0'), $3 || '-' || lpad(i::text, 6, '0'), i, 'EUR' \
         FROM generate_series(1, $4) AS i ORDER BY i RETURNING id",
    )
    .bind::<diesel::sql_types::Uuid, _>(tenant.tenant_id)
    .bind::<diesel::sql_types::Uuid, _>(organization)
    .bind::<diesel::sql_types::Text, _>(prefix)
    .bind::<diesel::sql_types::BigInt, _>(n)
    .load(&mut *conn)
    .await
    .unwrap();
    rows.into_iter().map(|r| r.id).collect()
}

/// Worker settings for tests: one slot, a short lease, fast polls.
pub fn worker_config() -> WorkerConfig {
    WorkerConfig {
        count: 1,
        visibility: Duration::from_secs(5),
        poll: Duration::from_millis(20),
        schedule_tick: Duration::from_millis(20),
    }
}

/// Workers running the catalog's jobs with a module context over `registry`
/// (its write guards apply to the jobs' writes).
pub fn workers(db: &Db, registry: Registry) -> Workers {
    let services = stoa_auth::testing::services(db, registry);
    Workers::new(db.clone(), stoa_catalog::job_handlers(), worker_config())
        .with_services(&services)
        .with_records(stoa_progress::records())
}

/// Runs queued jobs until none is due.
pub async fn run_jobs(db: &Db) {
    let workers = workers(db, registry());
    while workers.run_one().await.unwrap() {}
}

/// Starts a bulk delete (201 expected); returns the progress job id.
pub async fn bulk_delete<S: AppService>(app: &TestApp<S>, token: &str, ids: &[Uuid]) -> Uuid {
    let res = app
        .send(post_json(
            BULK,
            token,
            json!({"confirm": true, "ids": ids, "scope": "selected"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ok"], true);
    assert_eq!(body["message"], "Bulk delete started.");
    body["progressJobId"].as_str().unwrap().parse().unwrap()
}

/// The progress record of job `id` as `GET /progress/jobs/{id}` shows it.
pub async fn job<S: AppService>(app: &TestApp<S>, token: &str, id: Uuid) -> Value {
    let res = app
        .send(get(&format!("/api/progress/jobs/{id}"), token))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}
