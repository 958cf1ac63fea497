use std::sync::Arc;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use diesel::sql_types::{Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_acl::Registry;
use stoa_core::command::CommandRegistry;
use stoa_core::db::Db;
use stoa_testkit::{AppService, TestApp, TestResponse};
use uuid::Uuid;

pub use stoa_auth::testing::{Tenant, set_user_acl, token_for, user_with_features};
pub use stoa_testkit::operation;
pub use stoa_testkit::requests::{get, patch_json, post_json, put_json};

/// Every module the tests mount, with the wave-1 analytics sources.
pub fn registry() -> Registry {
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_audit_logs::register(&mut registry).unwrap();
    stoa_dashboards::register(&mut registry).unwrap();
    registry.check_slots().unwrap();
    registry
}

pub fn commands() -> CommandRegistry {
    stoa_dashboards::handlers_with(Arc::new(stoa_auth::PgAccounts))
        .into_iter()
        .fold(CommandRegistry::new(), CommandRegistry::handler)
}

pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    start_with(registry).await
}

/// The app over another registry (a test's own analytics sources).
pub async fn start_with(
    registry: fn() -> Registry,
) -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    stoa_testkit::app()
        .module_with(move |db| stoa_auth::testing::services(db, registry()).configurator())
        .module_with(move |db| {
            let state = stoa_auth::testing::state_with_registry(db, registry(), |_| {});
            Arc::new(stoa_auth::configure(state))
        })
        .module(stoa_audit_logs::configure(
            Arc::new(commands()),
            Arc::new(stoa_auth::PgAccounts),
        ))
        .module(stoa_dashboards::configure)
        .start()
        .await
}

/// A tenant provisioned with every module's grants and seeders.
pub async fn seed(db: &Db, name: &str, domain: &str) -> Tenant {
    stoa_auth::testing::seed_tenant_with(db, &registry(), name, domain).await
}

/// The id of a default role of the tenant.
pub async fn role_id(db: &Db, tenant: &Tenant, name: &str) -> Uuid {
    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = SqlUuid)]
        id: Uuid,
    }
    let mut conn = db.conn().await.unwrap();
    let rows: Vec<Id> =
        diesel::sql_query("SELECT id FROM roles WHERE tenant_id = $1 AND name = $2")
            .bind::<SqlUuid, _>(tenant.tenant_id)
            .bind::<Text, _>(name)
            .load(&mut *conn)
            .await
            .unwrap();
    rows[0].id
}

/// Runs SQL the tests need to shape data (timestamps, rows of other tables).
pub async fn exec(db: &Db, sql: &str) {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(sql).execute(&mut *conn).await.unwrap();
}

/// A child organization of `parent`.
pub async fn child_org(db: &Db, tenant: &Tenant, parent: Uuid, name: &str) -> Uuid {
    use stoa_directory::DirectoryService;
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
                parent_id: Some(parent),
                child_ids: None,
            },
        )
        .await
        .unwrap()
}

pub async fn layout<S: AppService>(app: &TestApp<S>, token: &str) -> Value {
    let res = app.send(get("/api/dashboards/layout", token)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}

pub fn widget_ids(layout: &Value) -> Vec<String> {
    layout["layout"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["widgetId"].as_str().unwrap().to_string())
        .collect()
}

pub async fn undo<S: AppService>(app: &TestApp<S>, token: &str, op: &Value) -> TestResponse {
    app.send(post_json(
        "/api/audit_logs/audit-logs/actions/undo",
        token,
        json!({"undoToken": op["undoToken"]}),
    ))
    .await
}

pub const WELCOME: &str = "dashboards.welcome";
pub const USERS_KPI: &str = "dashboards.analytics.usersKpi";
pub const ACTIVITY: &str = "dashboards.analytics.activityTrend";
