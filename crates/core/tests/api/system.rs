//! `/version`, `/health`, `/docs`, `/docs/openapi.json`.

use serde_json::json;
use stoa_testkit::app;

#[actix_web::test]
async fn version_is_a_bare_json_string() {
    let app = app().start().await;
    let res = app.get("/api/version").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!(stoa_core::BUILD_VERSION));

    let app = stoa_testkit::app()
        .http(|h| h.version = "9.9.9-test".into())
        .start()
        .await;
    assert_eq!(app.get("/api/version").await.json(), json!("9.9.9-test"));
}

#[actix_web::test]
async fn health_reports_the_database() {
    let app = app().start().await;
    let res = app.get("/api/health").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!({"status": "ok", "database": "ok"}));
}

#[actix_web::test]
async fn health_is_503_without_a_database() {
    let app = app().unreachable_database().start().await;
    let res = app.get("/api/health").await;
    assert_eq!(res.status, 503);
    assert_eq!(
        res.json(),
        json!({"status": "error", "database": "unavailable"})
    );
    // Endpoints that need no database still answer.
    assert_eq!(app.get("/api/version").await.status, 200);
}

#[actix_web::test]
async fn openapi_document_lists_every_system_endpoint() {
    let app = app().start().await;
    let res = app.get("/api/docs/openapi.json").await;
    assert_eq!(res.status, 200);
    let doc = res.json();
    assert_eq!(doc["openapi"], "3.1.0");
    for path in [
        "/api/version",
        "/api/health",
        "/api/docs",
        "/api/docs/openapi.json",
    ] {
        assert!(
            doc["paths"][path]["get"].is_object(),
            "{path} missing from the document"
        );
    }
    assert!(doc["paths"]["/api/health"]["get"]["responses"]["503"].is_object());
    assert!(doc["components"]["schemas"]["HealthBody"].is_object());
    assert!(doc["components"]["securitySchemes"]["bearerAuth"].is_object());
}

#[actix_web::test]
async fn docs_page_is_self_contained_html() {
    let app = app().start().await;
    let res = app.get("/api/docs").await;
    assert_eq!(res.status, 200);
    assert!(res.header("content-type").unwrap().starts_with("text/html"));
    let html = res.text();
    assert!(html.contains("openapi.json"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the page must not load external assets"
    );
}
