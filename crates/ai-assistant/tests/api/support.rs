//! The test app (auth, audit logs for undo, customers, catalog, the
//! assistant), tenants whose roles carry the default grants, and helpers.

use std::collections::HashMap;
use std::sync::Arc;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use serde_json::{Value, json};
use stoa_ai_assistant::{AiConfig, AiState};
use stoa_core::command::CommandRegistry;
use stoa_core::config::FromEnv;
use stoa_core::db::Db;
use stoa_testkit::{AppService, TestApp, TestResponse};
use uuid::Uuid;

pub use stoa_auth::testing::{Tenant, set_user_acl, token_for, user_with_features};
pub use stoa_testkit::requests::{delete, get, post_json, put_json};

pub const EXECUTE: &str = "/api/ai_assistant/tools/execute";
pub const ACTIONS: &str = "/api/ai_assistant/ai/actions";
pub const CHAT: &str = "/api/ai_assistant/ai/chat";

pub fn commands() -> CommandRegistry {
    stoa_customers::handlers(stoa_auth::testing::user_directory())
        .into_iter()
        .chain(stoa_catalog::handlers())
        .chain(stoa_directory::commands::handlers())
        .fold(CommandRegistry::new(), CommandRegistry::handler)
}

pub fn registry() -> stoa_acl::Registry {
    registry_with(Vec::new())
}

/// [`registry`] with `tools` besides the modules' own.
pub fn registry_with(tools: Vec<stoa_acl::AiTool>) -> stoa_acl::Registry {
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_audit_logs::register(&mut registry).unwrap();
    stoa_progress::register(&mut registry).unwrap();
    stoa_api_keys::register(&mut registry).unwrap();
    stoa_catalog::register(&mut registry, &stoa_auth::testing::organization_directory()).unwrap();
    stoa_customers::register(&mut registry, &stoa_auth::testing::user_directory()).unwrap();
    stoa_ai_assistant::register(&mut registry).unwrap();
    for tool in tools {
        registry.add_ai_tool(tool).unwrap();
    }
    registry.check_slots().unwrap();
    registry
}

/// An assistant configuration from `pairs` (environment variables).
pub fn config(pairs: &[(&str, &str)]) -> AiConfig {
    let vars: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    AiConfig::from_vars(&vars).unwrap()
}

pub async fn start() -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    start_with(config(&[])).await
}

pub async fn start_with(
    config: AiConfig,
) -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    start_with_agents(config, &[]).await
}

/// The test app with agents besides the built-in ones.
pub async fn start_with_agents(
    config: AiConfig,
    agents: &'static [&'static stoa_ai_assistant::agents::AgentDef],
) -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    start_full(config, agents, None, Vec::new()).await
}

/// The test app with agents and tools besides the built-in ones.
pub async fn start_with_tools(
    agents: &'static [&'static stoa_ai_assistant::agents::AgentDef],
    tools: fn() -> Vec<stoa_acl::AiTool>,
) -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    start_full(config(&[]), agents, None, tools()).await
}

/// The test app whose outbound guard lets requests from API input reach
/// 127.0.0.1 (the test upstreams), as `STOA_OUTBOUND_ALLOW=127.0.0.1` does.
pub async fn start_with_loopback(
    config: AiConfig,
) -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    let outbound = stoa_core::outbound::Outbound::new(&stoa_core::outbound::OutboundConfig {
        allow: vec!["127.0.0.1".parse().unwrap()],
        ..stoa_core::outbound::OutboundConfig::default()
    })
    .unwrap();
    start_full(config, &[], Some(outbound), Vec::new()).await
}

async fn start_full(
    config: AiConfig,
    agents: &'static [&'static stoa_ai_assistant::agents::AgentDef],
    outbound: Option<stoa_core::outbound::Outbound>,
    tools: Vec<stoa_acl::AiTool>,
) -> TestApp<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    let users = Arc::new(stoa_auth::PgAccounts);
    stoa_testkit::app()
        .module_with(stoa_auth::testing::module)
        .module_with(move |db: &Db| {
            let services = stoa_auth::testing::services(db, registry_with(tools));
            let mut state = AiState::new(&services, config).with_agents(agents);
            if let Some(outbound) = outbound {
                state.outbound = outbound;
            }
            Arc::new(stoa_ai_assistant::configure(Arc::new(state)))
        })
        .module(stoa_audit_logs::configure(
            Arc::new(commands()),
            users.clone(),
        ))
        .module(stoa_customers::configure(users))
        .module(stoa_catalog::configure(Arc::new(
            stoa_directory::PgDirectory,
        )))
        .start()
        .await
}

/// A tenant whose default roles carry every module's default grants.
pub async fn seed(db: &Db, name: &str, domain: &str) -> Tenant {
    stoa_auth::testing::seed_tenant_with(db, &registry(), name, domain).await
}

pub fn id_of(body: &Value) -> Uuid {
    body["id"].as_str().expect("an id").parse().expect("a uuid")
}

/// A pipeline with two stages and a deal in the first: (deal, stage 1, stage 2).
pub async fn deal_with_stages<S: AppService>(app: &TestApp<S>, token: &str) -> (Uuid, Uuid, Uuid) {
    let res = app
        .send(post_json(
            "/api/customers/pipelines",
            token,
            json!({"name": "Sales"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let pipeline = id_of(&res.json());
    let mut stages = Vec::new();
    for label in ["Lead", "Won"] {
        let res = app
            .send(post_json(
                "/api/customers/pipeline-stages",
                token,
                json!({"pipelineId": pipeline, "label": label}),
            ))
            .await;
        assert_eq!(res.status, 201, "{}", res.text());
        stages.push(id_of(&res.json()));
    }
    let res = app
        .send(post_json(
            "/api/customers/deals",
            token,
            json!({"title": "Big deal", "pipelineId": pipeline, "pipelineStageId": stages[0]}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    (id_of(&res.json()), stages[0], stages[1])
}

/// The deal's stage id.
pub async fn stage_of<S: AppService>(app: &TestApp<S>, token: &str, deal: Uuid) -> String {
    let res = app
        .send(get(&format!("/api/customers/deals/{deal}"), token))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()["deal"]["pipelineStageId"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Proposes moving `deal` to `stage` through `tools/execute` (200 expected);
/// returns the pending action's id.
pub async fn propose<S: AppService>(
    app: &TestApp<S>,
    token: &str,
    deal: Uuid,
    stage: Uuid,
) -> Uuid {
    let res = propose_res(app, token, deal, stage).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["result"]["status"], "pending-confirmation", "{body}");
    body["result"]["pendingActionId"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

pub async fn propose_res<S: AppService>(
    app: &TestApp<S>,
    token: &str,
    deal: Uuid,
    stage: Uuid,
) -> TestResponse {
    app.send(post_json(
        EXECUTE,
        token,
        json!({"toolName": "customers.update_deal_stage", "args": {"dealId": deal, "toPipelineStageId": stage}}),
    ))
    .await
}

/// The `data:` payloads of an event stream body.
pub fn frames(body: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(body)
        .split("\n\n")
        .filter_map(|f| f.strip_prefix("data: "))
        .map(String::from)
        .collect()
}

/// The JSON frames' `type`s, with `[DONE]` as itself.
pub fn types(frames: &[String]) -> Vec<String> {
    frames
        .iter()
        .map(|f| {
            if f == "[DONE]" {
                f.clone()
            } else {
                serde_json::from_str::<Value>(f).unwrap()["type"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            }
        })
        .collect()
}

/// The id of the tenant's role `name`.
pub async fn role_id(db: &Db, tenant: Uuid, name: &str) -> Uuid {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use stoa_auth::schema::roles;
    let mut conn = db.conn().await.unwrap();
    roles::table
        .filter(roles::tenant_id.eq(tenant))
        .filter(roles::name.eq(name))
        .select(roles::id)
        .first(&mut *conn)
        .await
        .unwrap()
}
