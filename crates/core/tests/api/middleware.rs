//! Middleware: request ids, security headers, CORS, JSON 404s and panics.

use actix_web::test::TestRequest;
use serde_json::json;
use stoa_testkit::app;

use super::fixtures;

#[actix_web::test]
async fn unknown_routes_answer_json_404() {
    let app = app().start().await;
    let res = app.get("/api/does-not-exist").await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), json!({"error": "Not found"}));
    let res = app.get("/").await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), json!({"error": "Not found"}));
}

#[actix_web::test]
async fn a_panicking_handler_answers_json_500() {
    let app = app().module(fixtures::configure).start().await;
    let res = app.get("/api/test/boom").await;
    assert_eq!(res.status, 500);
    assert_eq!(res.json(), json!({"error": "Internal server error"}));
    // The app keeps serving.
    assert_eq!(app.get("/api/version").await.status, 200);
}

#[actix_web::test]
async fn every_response_carries_security_headers_and_a_request_id() {
    let app = app().start().await;
    for path in ["/api/version", "/api/nope"] {
        let res = app.get(path).await;
        assert_eq!(
            res.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert!(res.header("referrer-policy").is_some(), "{path}");
        assert!(
            res.header("x-request-id").is_some_and(|v| v.len() >= 16),
            "{path}"
        );
    }
}

#[actix_web::test]
async fn request_ids_are_echoed_only_when_safe() {
    let app = app().start().await;
    let res = app
        .send(
            TestRequest::get()
                .uri("/api/version")
                .insert_header(("x-request-id", "abc-123")),
        )
        .await;
    assert_eq!(res.header("x-request-id"), Some("abc-123"));
    let res = app
        .send(
            TestRequest::get()
                .uri("/api/version")
                .insert_header(("x-request-id", "evil value\"")),
        )
        .await;
    assert_ne!(res.header("x-request-id"), Some("evil value\""));
}

#[actix_web::test]
async fn cors_allows_only_configured_origins() {
    let app = app()
        .http(|h| h.cors_origins = vec!["https://app.example.com".into()])
        .start()
        .await;
    let res = app
        .send(
            TestRequest::get()
                .uri("/api/version")
                .insert_header(("origin", "https://app.example.com")),
        )
        .await;
    assert_eq!(
        res.header("access-control-allow-origin"),
        Some("https://app.example.com")
    );

    let res = app
        .send(
            TestRequest::default()
                .method(actix_web::http::Method::OPTIONS)
                .uri("/api/version")
                .insert_header(("origin", "https://app.example.com"))
                .insert_header(("access-control-request-method", "GET")),
        )
        .await;
    assert!(res.status.is_success(), "preflight: {}", res.status);

    let res = app
        .send(
            TestRequest::get()
                .uri("/api/version")
                .insert_header(("origin", "https://evil.example")),
        )
        .await;
    assert_eq!(res.header("access-control-allow-origin"), None);
}

#[actix_web::test]
async fn metrics_count_requests_by_route_and_status() {
    let app = app()
        .module(fixtures::configure)
        .with_metrics()
        .start()
        .await;
    app.get("/api/version").await;
    app.get("/api/version").await;
    app.get("/api/test/items/bad").await;
    app.get("/api/unknown/path/123").await;
    let text = app.ctx.metrics.as_ref().unwrap().render();
    assert!(
        text.contains(
            r#"stoa_http_requests_total{method="GET",route="/api/version",status="200"} 2"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"route="/api/test/items/{id}",status="400""#),
        "{text}"
    );
    assert!(text.contains(r#"route="unmatched",status="404""#), "{text}");
    assert!(
        text.contains("stoa_http_request_duration_seconds_bucket"),
        "{text}"
    );
    assert!(text.contains("stoa_db_pool_max_connections"), "{text}");
}
