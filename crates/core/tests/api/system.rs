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

/// The `src`/`href` values of a page (what a browser loads from it).
fn referenced(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attr in ["src=\"", "href=\""] {
        let mut rest = html;
        while let Some(at) = rest.find(attr) {
            rest = &rest[at + attr.len()..];
            if let Some(end) = rest.find('"') {
                found.push(rest[..end].to_string());
                rest = &rest[end..];
            }
        }
    }
    found
}

#[actix_web::test]
async fn docs_page_is_the_explorer_served_from_the_server_itself() {
    let app = app().start().await;
    let res = app.get("/api/docs").await;
    assert_eq!(res.status, 200);
    assert!(res.header("content-type").unwrap().starts_with("text/html"));
    let csp = res.header("content-security-policy").unwrap().to_string();
    for directive in [
        "script-src 'self'",
        "connect-src 'self'",
        "default-src 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    let html = res.text();
    assert!(html.contains("id=\"swagger-ui\""), "{html}");
    let assets = referenced(&html);
    assert!(assets.len() >= 5, "{assets:?}");
    for asset in &assets {
        // Relative to the page: `/api/docs/...` of this server.
        assert!(
            asset.starts_with("docs/") && !asset.contains("//") && !asset.contains(".."),
            "{asset} is not one of the server's own files"
        );
        let res = app.get(&format!("/api/{asset}")).await;
        assert_eq!(res.status, 200, "{asset}");
        assert!(!res.body.is_empty(), "{asset}");
    }
    for (asset, kind) in [
        ("swagger-ui-bundle.js", "text/javascript"),
        ("swagger-ui.css", "text/css"),
        ("explorer.js", "text/javascript"),
    ] {
        assert!(assets.contains(&format!("docs/{asset}")), "{asset}");
        let res = app.get(&format!("/api/docs/{asset}")).await;
        assert!(res.header("content-type").unwrap().starts_with(kind));
    }
    // The settings name no other server: the document is read relative to
    // the page, Swagger's online validator is off.
    let config = app.get("/api/docs/explorer.js").await.text();
    for text in [&html, &config] {
        assert!(
            !text.contains("http://") && !text.contains("https://") && !text.contains("\"//"),
            "an absolute URL in the explorer: {text}"
        );
    }
    assert!(config.contains("url: \"docs/openapi.json\""), "{config}");
    assert!(config.contains("validatorUrl: null"), "{config}");
    // What is not one of its files is a 404, the document stays the document.
    for path in [
        "/api/docs/index.html",
        "/api/docs/swagger-initializer.js",
        "/api/docs/..%2FCargo.toml",
    ] {
        assert_eq!(app.get(path).await.status, 404, "{path}");
    }
    assert_eq!(
        app.get("/api/docs/openapi.json").await.json()["openapi"],
        "3.1.0"
    );
}

#[actix_web::test]
async fn the_document_declares_both_credentials_for_the_authorize_dialog() {
    let app = app().start().await;
    let doc = app.get("/api/docs/openapi.json").await.json();
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(
        schemes["bearerAuth"],
        json!({"type": "http", "scheme": "bearer", "bearerFormat": "JWT"})
    );
    assert_eq!(
        schemes["apiKey"],
        json!({"type": "apiKey", "in": "header", "name": "x-api-key"})
    );
    assert!(doc["paths"]["/api/docs/{asset}"]["get"].is_object());
}
