//! The embedding, end to end: a database migrated with only core's, the
//! queue's, customers' and the program's own migrations; the program's app
//! and identity; a deal created, moved by a bulk stage job that acts as its
//! creator, and the move undone through the program's undo route.
#![expect(
    clippy::unwrap_used,
    reason = "a test fails by panicking with a clear message"
)]

use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_core::config::HttpConfig;
use stoa_core::db::Db;
use stoa_jobs::WorkerConfig;
use stoa_testkit::requests::{get, post_json};
use stoa_testkit::{TestDb, count, sql};
use uuid::Uuid;

const TOKEN: &str = "embed-example-token";

fn http() -> HttpConfig {
    HttpConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        metrics_bind: None,
        workers: 1,
        cors_origins: Vec::new(),
        app_url: None,
        body_limit: 1 << 20,
        version: "embed-deals".into(),
        sse_keep_alive: Duration::from_secs(15),
        trust_proxy_depth: 0,
    }
}

fn worker_config() -> WorkerConfig {
    WorkerConfig {
        count: 1,
        visibility: Duration::from_secs(5),
        poll: Duration::from_millis(20),
        schedule_tick: Duration::from_millis(20),
    }
}

async fn send<S, B>(app: &S, req: test::TestRequest) -> (u16, Value)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let res = test::call_service(app, req.to_request()).await;
    let status = res.status().as_u16();
    let body = test::read_body(res).await;
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

#[derive(diesel::QueryableByName)]
struct Token {
    #[diesel(sql_type = diesel::sql_types::Text)]
    undo_token: String,
}

#[actix_web::test]
async fn a_deal_is_created_moved_by_a_bulk_job_and_the_move_undone() {
    let test_db = TestDb::empty().await;
    // Migrations block their thread: a multi-threaded runtime runs them, as
    // the program's `main` would.
    let url = test_db.url().to_string();
    let applied = stoa_testkit::spawn_on_own_runtime(move || async move {
        stoa_core::db::run_migrations_from(&url, embed_deals::migrations()).await
    })
    .join()
    .unwrap()
    .expect("the example's migrations apply");
    // Not directory's, auth's or progress's first migrations (diesel
    // answers versions), and none of their tables.
    for other in ["20261122001000", "20261122002000", "20261122004000"] {
        assert!(!applied.iter().any(|v| v == other), "{applied:?}");
    }
    assert!(applied.iter().any(|v| v == "20261122000900"), "{applied:?}");
    assert_eq!(
        count(
            &Db::from_url(test_db.url(), 2, Duration::from_secs(10))
                .unwrap()
                .fixtures(),
            "SELECT count(*) FROM pg_tables WHERE tablename IN ('progress_jobs', 'roles', 'api_keys')",
        )
        .await,
        0,
        "no other module's tables"
    );

    let db = Db::from_url(test_db.url(), 4, Duration::from_secs(10)).unwrap();
    let fixtures = db.fixtures();
    let (tenant, org, user) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    for statement in [
        format!("INSERT INTO tenants (id, name) VALUES ('{tenant}', 'Acme')"),
        format!(
            "INSERT INTO organizations (id, tenant_id, name) VALUES ('{org}', '{tenant}', 'Acme HQ')"
        ),
        format!(
            "INSERT INTO users (id, tenant_id, organization_id, name, features)
             VALUES ('{user}', '{tenant}', '{org}', 'Ada', ARRAY['customers.*'])"
        ),
    ] {
        sql(&fixtures, &statement).await;
    }

    let identity = embed_deals::Identity::new(db.clone(), [(TOKEN.to_string(), user)]);
    let ctx = embed_deals::app_context(db.clone(), http(), identity.clone());
    let app = test::init_service(stoa_core::http::app(&ctx)).await;

    // No token, no access.
    let (status, _) = send(&app, test::TestRequest::get().uri("/api/customers/deals")).await;
    assert_eq!(status, 401);

    let (status, body) = send(
        &app,
        post_json("/api/customers/pipelines", TOKEN, json!({"name": "Sales"})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let pipeline = body["id"].as_str().unwrap().to_string();
    let mut stages = Vec::new();
    for label in ["Lead", "Won"] {
        let (status, body) = send(
            &app,
            post_json(
                "/api/customers/pipeline-stages",
                TOKEN,
                json!({"pipelineId": pipeline, "label": label}),
            ),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        stages.push(body["id"].as_str().unwrap().to_string());
    }

    let (status, body) = send(
        &app,
        post_json(
            "/api/customers/deals",
            TOKEN,
            json!({"title": "Rocket", "ownerUserId": user, "pipelineStageId": stages[0]}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let deal = body["id"].as_str().unwrap().to_string();

    // The bulk move is queued without a record (the program keeps none)...
    let (status, body) = send(
        &app,
        post_json(
            "/api/customers/deals/bulk-update-stage",
            TOKEN,
            json!({"ids": [deal], "pipelineStageId": stages[1]}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["ok"], true);
    assert!(body["progressJobId"].is_null(), "{body}");

    // ...and run by the program's workers as its creator.
    let workers = embed_deals::workers(db.clone(), identity, worker_config());
    assert!(workers.run_one().await.unwrap(), "the job was due");
    assert_eq!(
        count(
            &fixtures,
            "SELECT count(*) FROM job_queue WHERE status = 'done'"
        )
        .await,
        1
    );
    let (status, body) = send(&app, get(&format!("/api/customers/deals/{deal}"), TOKEN)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["deal"]["pipelineStageId"], stages[1].as_str());
    assert_eq!(body["deal"]["pipelineStage"], "Won");

    // The job's entry for the deal undoes the move.
    let mut conn = fixtures.conn().await.unwrap();
    let token = diesel::sql_query(format!(
        "SELECT undo_token FROM action_logs
         WHERE command_id = 'customers.deals.bulk_update_stage' AND resource_id = '{deal}'"
    ))
    .get_result::<Token>(&mut *conn)
    .await
    .unwrap()
    .undo_token;
    drop(conn);
    let (status, body) = send(
        &app,
        post_json("/api/embed/undo", TOKEN, json!({"undoToken": token})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = send(&app, get(&format!("/api/customers/deals/{deal}"), TOKEN)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["deal"]["pipelineStageId"], stages[0].as_str());
    assert_eq!(body["deal"]["pipelineStage"], "Lead");
    assert_eq!(body["deal"]["ownerUserId"], user.to_string());
}
