//! The test app (auth with the rules' write guard, audit logs, progress,
//! customers for deals, business rules), tenants whose roles carry both
//! modules' grants, and helpers.

use std::sync::Arc;
use std::time::Duration;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use serde_json::{Value, json};
use stoa_core::command::CommandRegistry;
use stoa_core::command::outbox::Dispatcher;
use stoa_core::db::Db;
use stoa_core::outbound::{Cidr, Outbound, OutboundConfig};
use stoa_jobs::{WorkerConfig, Workers};
use stoa_testkit::{AppService, TestApp};
use uuid::Uuid;

pub use stoa_auth::testing::{Tenant, token_for, user_with_features};
pub use stoa_testkit::count;
pub use stoa_testkit::requests::{delete, get, post_json, put_json};

pub const RULES: &str = "/api/business_rules/rules";
pub const SETS: &str = "/api/business_rules/sets";
pub const EXECUTE: &str = "/api/business_rules/execute";
pub const LOGS: &str = "/api/business_rules/logs";
pub const DEALS: &str = "/api/customers/deals";

pub fn commands(db: &Db) -> CommandRegistry {
    stoa_customers::handlers(stoa_auth::testing::user_directory())
        .into_iter()
        .chain(stoa_business_rules::handlers(Arc::new(services(db))))
        .chain(stoa_directory::commands::handlers())
        .fold(CommandRegistry::new(), CommandRegistry::handler)
}

pub fn users() -> Arc<stoa_auth::PgAccounts> {
    Arc::new(stoa_auth::PgAccounts)
}

/// The fields of the entity types only these tests' rules watch.
const TEST_FIELDS: &[stoa_acl::RuleField] = &{
    use stoa_acl::RuleFieldKind::{Number, Text};
    const fn f(name: &'static str, kind: stoa_acl::RuleFieldKind) -> stoa_acl::RuleField {
        stoa_acl::RuleField {
            name,
            label: name,
            kind,
        }
    }
    [
        f("title", Text),
        f("status", Text),
        f("description", Text),
        f("amount", Number),
        f("salary", Number),
        f("total", Number),
        f("probability", Number),
        f("valueAmount", Number),
        f("n", Number),
        f("customer", Text),
        f("items", Text),
        f("data", Text),
    ]
};

/// Rules may watch only entity types a module declares: the tests' own
/// (`crm.deal`, `test.thing`, `x.y`) are declared here, by no module (their
/// namespaces stay free for `EMIT_EVENT`), needing no feature to read.
fn register_test_entities(registry: &mut stoa_acl::Registry) {
    for (entity_type, label) in [
        ("crm.deal", "Deal (tests)"),
        ("test.thing", "Thing (tests)"),
        ("x.y", "Y (tests)"),
    ] {
        registry
            .add_rule_entity(stoa_acl::RuleEntity {
                entity_type,
                module: "tests",
                label,
                fields: TEST_FIELDS,
                events: &[],
                features: &[],
            })
            .unwrap();
    }
}

/// The registry of the modules the tests mount (the rules' guard included).
pub fn registry() -> stoa_acl::Registry {
    let mut registry = stoa_auth::base_registry().unwrap();
    register_test_entities(&mut registry);
    stoa_audit_logs::register(&mut registry).unwrap();
    stoa_progress::register(&mut registry).unwrap();
    stoa_api_keys::register(&mut registry).unwrap();
    stoa_customers::register(&mut registry, &stoa_auth::testing::user_directory()).unwrap();
    stoa_business_rules::register(&mut registry).unwrap();
    for operations in [
        stoa_customers::operations::OPERATIONS,
        stoa_business_rules::operations::OPERATIONS,
    ] {
        registry.register_operations(operations).unwrap();
    }
    registry
}

/// Outbound clients whose guard lets requests reach 127.0.0.1 (the test
/// upstreams) and nothing else that is not public.
pub fn outbound() -> Outbound {
    Outbound::new(&OutboundConfig {
        connect_timeout: Duration::from_millis(500),
        first_byte_timeout: Duration::from_millis(1000),
        idle_timeout: Duration::from_millis(1000),
        max_response_bytes: 10_000,
        max_redirects: 0,
        allow: vec!["127.0.0.1".parse::<Cidr>().unwrap()],
    })
    .unwrap()
}

/// Job and rule-author resolution as the server wires it: users by
/// stoa-auth, API keys by stoa-api-keys.
pub fn creators() -> Arc<dyn stoa_acl::CreatorResolver> {
    let keys = stoa_api_keys::KeyCreators::new(users(), Arc::new(stoa_auth::PgCreators::new()));
    Arc::new(stoa_auth::PgCreators::new().with_api_keys(Arc::new(keys)))
}

pub fn services(db: &Db) -> stoa_acl::Services {
    let mut services = stoa_auth::testing::services(db, registry());
    services.outbound = outbound();
    services.creators = creators();
    services.api_keys = Arc::new(stoa_api_keys::PgKeyDirectory::new(
        users(),
        Arc::new(stoa_directory::PgDirectory),
    ));
    services
}

pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    stoa_testkit::app()
        .module_with(|db| services(db).configurator())
        .module_with(|db| {
            Arc::new(stoa_auth::configure(
                stoa_auth::testing::state_with_registry(db, registry(), |_| {}),
            ))
        })
        .module_with(|db| Arc::new(stoa_audit_logs::configure(Arc::new(commands(db)), users())))
        .module(stoa_progress::configure)
        .module(stoa_customers::configure(users()))
        .module(stoa_business_rules::configure)
        // Kept answers, as `stoa serve` keeps them (the rule and log lists).
        .reads_with(stoa_auth::testing::reads)
        .start()
        .await
}

/// A tenant whose default roles carry the grants of every mounted module.
pub async fn seed(db: &Db, name: &str, domain: &str) -> Tenant {
    stoa_auth::testing::seed_tenant_with(db, &registry(), name, domain).await
}

pub fn id_of(body: &Value) -> Uuid {
    body["id"].as_str().expect("an id").parse().expect("a uuid")
}

/// Creates a rule (201 expected); `extra` is merged into a minimal body.
pub async fn rule<S: AppService>(app: &TestApp<S>, token: &str, extra: Value) -> Uuid {
    let mut body = json!({
        "ruleId": "r1", "ruleName": "Rule one", "ruleType": "ACTION", "entityType": "test.thing",
    });
    if let (Value::Object(b), Value::Object(e)) = (&mut body, extra) {
        b.extend(e);
    }
    let res = app.send(post_json(RULES, token, body.clone())).await;
    assert_eq!(res.status, 201, "{body}: {}", res.text());
    id_of(&res.json())
}

/// Creates a pipeline with two stages; returns `(pipeline, [stage1, stage2])`.
pub async fn pipeline<S: AppService>(app: &TestApp<S>, token: &str) -> (Uuid, [Uuid; 2]) {
    let res = app
        .send(post_json(
            "/api/customers/pipelines",
            token,
            json!({"name": "Sales"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let pipeline = id_of(&res.json());
    let mut stages = [Uuid::nil(); 2];
    for (i, label) in ["New", "Won"].iter().enumerate() {
        let res = app
            .send(post_json(
                "/api/customers/pipeline-stages",
                token,
                json!({"pipelineId": pipeline, "label": label}),
            ))
            .await;
        assert_eq!(res.status, 201, "{}", res.text());
        stages[i] = id_of(&res.json());
    }
    (pipeline, stages)
}

/// Creates a deal (201 expected).
pub async fn deal<S: AppService>(app: &TestApp<S>, token: &str, body: Value) -> Uuid {
    let res = app.send(post_json(DEALS, token, body.clone())).await;
    assert_eq!(res.status, 201, "{body}: {}", res.text());
    id_of(&res.json())
}

/// Delivers the outbox to the rules' trigger until nothing is due.
pub async fn dispatch(db: &Db) {
    dispatch_with(db, stoa_acl::PlatformSlot::default()).await;
}

/// [`dispatch`] with a platform caller (`CALL_OPEN_MERCATO`).
pub async fn dispatch_with(db: &Db, platform: stoa_acl::PlatformSlot) {
    let dispatcher = Dispatcher::new(
        db.clone(),
        stoa_business_rules::subscribers(db.clone(), Arc::new(registry()), platform, creators()),
    );
    for _ in 0..10 {
        if dispatcher.run_once().await.unwrap() == 0 {
            break;
        }
    }
}

pub fn worker_config() -> WorkerConfig {
    WorkerConfig {
        count: 1,
        visibility: Duration::from_millis(2000),
        poll: Duration::from_millis(20),
        schedule_tick: Duration::from_millis(20),
    }
}

/// Workers running the rules' webhook jobs and the customers' bulk jobs (as
/// their creators, the rules' guard attached).
pub fn workers(db: &Db) -> Workers {
    let services = services(db);
    let mut handlers = stoa_business_rules::job_handlers(outbound(), services.keys.clone());
    handlers.extend(stoa_customers::job_handlers(users()));
    Workers::new(db.clone(), handlers, worker_config())
        .with_services(&services)
        .with_records(stoa_progress::records())
}
