//! Traces over OTLP/HTTP: a small collector on loopback receives what the
//! server exports, and a request that queues a job yields one connected
//! trace (request -> its statements; the job -> its statements), continuing
//! the caller's `traceparent`.
//!
//! Its own test binary: the tracing subscriber is global to the process.
#![expect(
    clippy::unwrap_used,
    reason = "the collector and helpers fail the test by panicking"
)]

use std::sync::{Arc, Mutex};

use actix_web::{App, HttpResponse, HttpServer, web};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;
use stoa_auth::AuthConfig;
use stoa_auth::testing::{seed_tenant_with, token_for};
use stoa_core::config::{LogConfig, LogFormat};
use stoa_core::db::Db;
use stoa_core::http::ApiConfigurator;
use stoa_core::traces::TraceConfig;
use stoa_testkit::requests::post_json;

/// What the collector received, span by span.
#[derive(Clone, Default)]
struct Received(Arc<Mutex<Vec<Span>>>);

async fn collect(received: web::Data<Received>, body: web::Bytes) -> HttpResponse {
    match ExportTraceServiceRequest::decode(body) {
        Ok(request) => {
            let spans = request
                .resource_spans
                .into_iter()
                .flat_map(|r| r.scope_spans)
                .flat_map(|s| s.spans);
            received.0.lock().unwrap().extend(spans);
            // An empty ExportTraceServiceResponse.
            HttpResponse::Ok()
                .content_type("application/x-protobuf")
                .finish()
        }
        Err(err) => HttpResponse::BadRequest().body(err.to_string()),
    }
}

/// Starts the collector on an ephemeral loopback port; returns its base URL.
fn collector(received: Received) -> String {
    let server = HttpServer::new(move || {
        App::new()
            .app_data(web::Data::new(received.clone()))
            .app_data(web::PayloadConfig::new(16 * 1024 * 1024))
            .route("/v1/traces", web::post().to(collect))
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .unwrap();
    let addr = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    format!("http://{addr}")
}

fn everything(db: &Db) -> ApiConfigurator {
    let configurators = stoa_server::configurators(
        &stoa_server::test_services(db).unwrap(),
        AuthConfig::for_tests(),
    )
    .unwrap();
    Arc::new(move |cfg| {
        for configure in &configurators {
            configure(cfg);
        }
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
        .map(|value| match value {
            Value::StringValue(s) => s.clone(),
            other => format!("{other:?}"),
        })
}

const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

#[actix_web::test]
async fn a_request_that_queues_a_job_yields_one_connected_trace() {
    let received = Received::default();
    let base = collector(received.clone());
    stoa_core::telemetry::init_with(
        &LogConfig {
            filter: "warn".into(),
            format: LogFormat::Json,
        },
        Some(&TraceConfig::collector(&base)),
    );
    assert!(stoa_core::traces::enabled());

    let app = stoa_testkit::app().module_with(everything).start().await;
    let registry = stoa_server::registry().unwrap();
    let acme = seed_tenant_with(&app.db, &registry, "Acme Corp", "acme.com").await;
    let token = token_for(&app.db, acme.admin).await;

    // A bulk delete answers at once and leaves the work to a queued job.
    let res = app
        .send(
            post_json(
                "/api/catalog/bulk-delete",
                &token,
                json!({"confirm": true, "ids": [uuid::Uuid::new_v4()], "scope": "selected"}),
            )
            .insert_header(("traceparent", format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01"))),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());

    let services = stoa_server::test_services(&app.db).unwrap();
    let modules = stoa_server::modules(&services, stoa_auth::AuthConfig::for_tests()).unwrap();
    let workers = stoa_server::workers(
        &services,
        &modules.list,
        stoa_jobs::WorkerConfig::default(),
        Vec::new(),
    );
    let mut ran = 0;
    while workers.run_one().await.unwrap() {
        ran += 1;
    }
    assert!(ran >= 1, "the request queued a job");

    tokio::task::spawn_blocking(stoa_core::traces::flush)
        .await
        .unwrap();
    let spans = received.0.lock().unwrap().clone();
    let trace: Vec<&Span> = spans
        .iter()
        .filter(|s| hex(&s.trace_id) == CALLER_TRACE)
        .collect();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();

    // The request's span continues the caller's trace, named by its route.
    let request = trace
        .iter()
        .find(|s| s.name == "POST /api/catalog/bulk-delete")
        .unwrap_or_else(|| panic!("no request span in the caller's trace: {names:?}"));
    assert_eq!(hex(&request.parent_span_id), CALLER_SPAN);
    let children_of = |parent: &Span| -> Vec<&Span> {
        trace
            .iter()
            .copied()
            .filter(|s| s.parent_span_id == parent.span_id)
            .collect()
    };
    // Its statements are its children (directly or inside a transaction).
    let descendants = |root: &Span| -> Vec<&Span> {
        let mut found: Vec<&Span> = Vec::new();
        let mut frontier = vec![root];
        while let Some(next) = frontier.pop() {
            for child in children_of(next) {
                found.push(child);
                frontier.push(child);
            }
        }
        found
    };
    let statements = |root: &Span| -> Vec<String> {
        descendants(root)
            .into_iter()
            .filter_map(|s| attribute(s, "db.statement"))
            .collect()
    };
    let request_sql = statements(request);
    assert!(
        request_sql.iter().any(|sql| sql.contains("job_queue")),
        "the request's statements include queueing the job: {request_sql:?}"
    );
    assert!(
        request_sql.iter().all(|sql| !sql.contains("-- binds")),
        "no bind value leaves the process"
    );

    // The job runs in the same trace, under the request that queued it.
    let job = trace
        .iter()
        .find(|s| s.name.starts_with("job "))
        .unwrap_or_else(|| panic!("no job span in the caller's trace: {names:?}"));
    assert!(
        descendants(request)
            .iter()
            .any(|s| s.span_id == job.span_id),
        "the job's span descends from the request's"
    );
    assert!(
        !statements(job).is_empty(),
        "the job's statements are its children"
    );
}
