//! The test app: auth (sign-in), dashboards, attachments, progress and
//! onboarding behind the access matrix (which renders the declared error
//! shapes), over a registry with every seeder a new workspace gets.

use std::sync::Arc;
use std::time::Duration;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_acl::{AccessMatrix, Registry};
use stoa_core::db::Db;
use stoa_core::http::{AccessPolicy, ApiConfigurator};
use stoa_jobs::{WorkerConfig, Workers};
use stoa_onboarding::{OnboardingConfig, OnboardingState};
use stoa_testkit::{AppService, TestApp, TestResponse};

pub use stoa_testkit::count;
pub use stoa_testkit::requests::get;

pub const SUBMIT: &str = "/api/onboarding/onboarding";
pub const VERIFY: &str = "/api/onboarding/onboarding/verify";
pub const STATUS: &str = "/api/onboarding/onboarding/status";
pub const PUBLIC_URL: &str = "https://api.stoa.test";
pub const PASSWORD: &str = "Str0ng-Passw0rd!";

/// Every module a new workspace is seeded by, and onboarding.
pub fn registry() -> Registry {
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_progress::register(&mut registry).unwrap();
    stoa_catalog::register(&mut registry, &stoa_auth::testing::organization_directory()).unwrap();
    stoa_dashboards::register(&mut registry).unwrap();
    stoa_customers::register(&mut registry, &stoa_auth::testing::user_directory()).unwrap();
    stoa_attachments::register(&mut registry).unwrap();
    stoa_onboarding::register(&mut registry).unwrap();
    registry
}

/// Enabled, small demo data, generous limits (the rate-limit tests lower them).
pub fn config() -> OnboardingConfig {
    OnboardingConfig {
        demo_deals: 5,
        demo_products: 4,
        submit_per_client: "1000/60".parse().unwrap(),
        submit_per_email: "1000/60".parse().unwrap(),
        ..OnboardingConfig::enabled(PUBLIC_URL)
    }
}

pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    start_with(config()).await
}

pub async fn start_with(
    config: OnboardingConfig,
) -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    stoa_testkit::app()
        .server_with(move |db| {
            let auth = stoa_auth::testing::state_with_registry(db, registry(), |_| {});
            let mut declared = registry();
            for operations in [
                stoa_auth::operations::OPERATIONS,
                stoa_progress::operations::OPERATIONS,
                stoa_dashboards::operations::OPERATIONS,
                stoa_attachments::operations::OPERATIONS,
                stoa_onboarding::operations::OPERATIONS,
            ] {
                declared.register_operations(operations).unwrap();
            }
            let access: Arc<dyn AccessPolicy> =
                Arc::new(AccessMatrix::new(declared.operations(), auth.clone()));
            let services = stoa_auth::testing::services(db, registry());
            let state = Arc::new(OnboardingState::new(
                db.clone(),
                config,
                services.registry.clone(),
                services.onboarding.clone(),
                stoa_auth::AuthConfig::for_tests().jwt_secret.expose(),
            ));
            let modules: Vec<ApiConfigurator> = vec![
                services.configurator(),
                Arc::new(stoa_auth::configure(auth)),
                Arc::new(stoa_progress::configure),
                Arc::new(stoa_dashboards::configure),
                Arc::new(stoa_attachments::configure(
                    stoa_attachments::AttachmentsConfig::default(),
                )),
                Arc::new(stoa_onboarding::configure(state)),
            ];
            (modules, Some(access))
        })
        .start()
        .await
}

/// A valid sign-up form for `email`.
pub fn form(email: &str) -> Value {
    json!({
        "email": email,
        "firstName": "Ada",
        "lastName": "Lovelace",
        "organizationName": "Analytical Engines",
        "password": PASSWORD,
        "confirmPassword": PASSWORD,
        "termsAccepted": true,
        "marketingConsent": true,
        "locale": "en",
    })
}

/// `POST /onboarding/onboarding` without credentials, from `ip`.
pub fn submit_from(body: &Value, ip: &str) -> TestRequest {
    TestRequest::post()
        .uri(SUBMIT)
        .peer_addr(format!("{ip}:40000").parse().unwrap())
        .set_json(body)
}

pub async fn submit<S: AppService>(app: &TestApp<S>, body: &Value) -> TestResponse {
    app.send(submit_from(body, "10.1.1.1")).await
}

/// `GET verify?token=` asking for JSON.
pub async fn verify<S: AppService>(app: &TestApp<S>, token: &str) -> TestResponse {
    app.send(
        TestRequest::get()
            .uri(&format!("{VERIFY}?token={token}"))
            .insert_header(("accept", "application/json")),
    )
    .await
}

/// The queued e-mails (outbox `mail.send` payloads) to `to`, oldest first.
pub async fn mails_to(db: &Db, to: &str) -> Vec<Value> {
    stoa_testkit::outbox_events_named(db, "mail.send")
        .await
        .into_iter()
        .map(|e| e["payload"].clone())
        .filter(|m| m["to"] == to)
        .collect()
}

/// The verification link of the latest e-mail to `to`.
pub async fn link_for(db: &Db, to: &str) -> String {
    let mails = mails_to(db, to).await;
    let body = mails.last().expect("an e-mail")["body"]
        .as_str()
        .expect("a text body")
        .to_string();
    body.split_whitespace()
        .find(|w| w.starts_with(PUBLIC_URL))
        .expect("a link in the e-mail")
        .to_string()
}

/// The token of the latest link e-mailed to `to`.
pub async fn token_for_email(db: &Db, to: &str) -> String {
    let link = link_for(db, to).await;
    link.split_once("token=").expect("a token").1.to_string()
}

/// The path (under the API) of a link from the e-mail.
pub fn path_of(link: &str) -> String {
    link.strip_prefix(PUBLIC_URL)
        .expect("the public URL")
        .to_string()
}

#[derive(QueryableByName)]
struct One {
    #[diesel(sql_type = Text)]
    v: String,
}

/// One text value.
pub async fn text(db: &Db, sql: &str) -> String {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(sql)
        .get_result::<One>(&mut *conn)
        .await
        .unwrap()
        .v
}

pub async fn exec(db: &Db, sql: &str) {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(sql).execute(&mut *conn).await.unwrap();
}

/// Workers running onboarding's jobs.
pub fn workers(db: &Db) -> Workers {
    let services = stoa_auth::testing::services(db, registry());
    Workers::new(
        db.clone(),
        stoa_onboarding::job_handlers(&registry()),
        WorkerConfig {
            count: 1,
            visibility: Duration::from_secs(30),
            poll: Duration::from_millis(20),
            schedule_tick: Duration::from_millis(50),
        },
    )
    .with_services(&services)
    .with_records(stoa_progress::records())
}

/// Signs up `email` and opens the e-mailed link; the verification's JSON.
pub async fn onboard<S: AppService>(app: &TestApp<S>, email: &str) -> Value {
    let res = submit(app, &form(email)).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let token = token_for_email(&app.db, email).await;
    let res = verify(app, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["ok"], true, "{}", res.text());
    res.json()
}
