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

/// A write route that counts how often its handler runs.
fn counting(
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> impl Fn(&mut stoa_core::http::ServiceConfig) + Send + Sync + 'static {
    move |cfg| {
        let hits = hits.clone();
        cfg.route(
            "/test/write",
            actix_web::web::route().to(move || {
                hits.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async { actix_web::HttpResponse::Ok().json(json!({"ok": true})) }
            }),
        );
    }
}

fn write(method: actix_web::http::Method) -> TestRequest {
    TestRequest::default()
        .method(method)
        .uri("/api/test/write")
        .cookie(actix_web::cookie::Cookie::new("auth_token", "t0ken"))
}

#[actix_web::test]
async fn cookie_authenticated_writes_from_foreign_origins_are_refused() {
    use actix_web::http::Method;
    use std::sync::atomic::Ordering;
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let app = app()
        .module(counting(hits.clone()))
        .http(|h| {
            h.cors_origins = vec!["https://ui.example.com".into()];
            h.app_url = Some("https://app.example.com/".into());
        })
        .start()
        .await;

    for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
        let res = app
            .send(write(method.clone()).insert_header(("origin", "https://evil.example")))
            .await;
        assert_eq!(res.status, 403, "{method}: {}", res.text());
        assert!(res.json()["error"].as_str().unwrap().contains("Cross-site"));
        assert_eq!(res.header("access-control-allow-credentials"), None);
    }
    let res = app
        .send(
            write(Method::POST)
                .cookie(actix_web::cookie::Cookie::new("session_token", "s"))
                .insert_header(("referer", "https://evil.example/form.html")),
        )
        .await;
    assert_eq!(res.status, 403, "Referer without Origin: {}", res.text());
    let res = app
        .send(write(Method::POST).insert_header(("origin", "null")))
        .await;
    assert_eq!(res.status, 403, "opaque origin");
    assert_eq!(hits.load(Ordering::SeqCst), 0, "no refused handler ran");

    // Trusted: CORS origins, APP_URL's origin, the server's own origin, no
    // Origin/Referer at all (non-browser clients), explicit credentials, reads.
    let allowed = [
        write(Method::POST).insert_header(("origin", "https://ui.example.com")),
        write(Method::DELETE).insert_header(("origin", "https://app.example.com")),
        write(Method::PUT).insert_header(("origin", "http://localhost:8080")),
        write(Method::POST).insert_header(("referer", "https://app.example.com/users")),
        write(Method::POST),
        write(Method::POST)
            .insert_header(("origin", "https://evil.example"))
            .insert_header(("authorization", "Bearer x")),
        write(Method::GET).insert_header(("origin", "https://evil.example")),
        TestRequest::post()
            .uri("/api/test/write")
            .insert_header(("origin", "https://evil.example")),
    ];
    let count = allowed.len();
    for (i, req) in allowed.into_iter().enumerate() {
        let res = app.send(req).await;
        assert_eq!(res.status, 200, "case {i}: {}", res.text());
    }
    assert_eq!(hits.load(Ordering::SeqCst), count);
}

/// The attacker's page posts a form to the API; the victim's browser attaches
/// the session cookie and, for a site it once signed into with HTTP Basic,
/// the cached `Authorization: Basic`. Whatever else a request carries, the
/// cookie authenticates it unless a bearer session token is sent, so the
/// guard checks it.
#[actix_web::test]
async fn cookie_writes_are_checked_whatever_other_credentials_they_carry() {
    use actix_web::http::Method;
    use std::sync::atomic::Ordering;
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let app = app().module(counting(hits.clone())).start().await;
    let evil = || write(Method::POST).insert_header(("origin", "https://evil.example"));
    let refused = [
        (
            "cached Basic",
            evil().insert_header(("authorization", "Basic dTpw")),
        ),
        ("x-api-key", evil().insert_header(("x-api-key", "omk_a.b"))),
        (
            "ApiKey scheme",
            evil().insert_header(("authorization", "ApiKey omk_a.b")),
        ),
        (
            "key as bearer",
            evil().insert_header(("authorization", "Bearer omk_a.b")),
        ),
        (
            "empty bearer",
            evil().insert_header(("authorization", "Bearer ")),
        ),
        (
            "Negotiate",
            evil().insert_header(("authorization", "Negotiate YIIB")),
        ),
        // The own host over the other scheme is another origin.
        (
            "https on an http listener",
            write(Method::POST).insert_header(("origin", "https://localhost:8080")),
        ),
        // Without a configured proxy depth, forwarded headers are the
        // client's own words.
        (
            "spoofed forwarded host",
            evil()
                .insert_header(("x-forwarded-host", "evil.example"))
                .insert_header(("x-forwarded-proto", "https")),
        ),
    ];
    for (case, req) in refused {
        let res = app.send(req).await;
        assert_eq!(res.status, 403, "{case}: {}", res.text());
        assert!(res.json()["error"].as_str().unwrap().contains("Cross-site"));
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "no refused handler ran");

    // The legitimate paths: a bearer session token (never the cookie), the
    // same origin, and an API key without the cookie.
    let allowed = [
        evil().insert_header(("authorization", "Bearer eyJ.a.b")),
        write(Method::POST)
            .insert_header(("origin", "http://localhost:8080"))
            .insert_header(("authorization", "Basic dTpw")),
        TestRequest::post()
            .uri("/api/test/write")
            .insert_header(("origin", "https://evil.example"))
            .insert_header(("x-api-key", "omk_a.b")),
    ];
    let count = allowed.len();
    for (i, req) in allowed.into_iter().enumerate() {
        let res = app.send(req).await;
        assert_eq!(res.status, 200, "case {i}: {}", res.text());
    }
    assert_eq!(hits.load(Ordering::SeqCst), count);
}

/// Behind a configured proxy, the origin the client addressed comes from the
/// entries the trusted proxy wrote; what the client put before them does not
/// count.
#[actix_web::test]
async fn forwarded_headers_count_only_behind_the_configured_proxies() {
    use actix_web::http::Method;
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let app = app()
        .module(counting(hits.clone()))
        .http(|h| h.trust_proxy_depth = 1)
        .start()
        .await;
    let proxied = |origin: &'static str, host: &'static str, proto: &'static str| {
        write(Method::POST)
            .insert_header(("origin", origin))
            .insert_header(("x-forwarded-host", host))
            .insert_header(("x-forwarded-proto", proto))
    };
    let res = app
        .send(proxied(
            "https://api.example.com",
            "api.example.com",
            "https",
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    // The client prepended its own entries; the proxy appended the real ones.
    let res = app
        .send(proxied(
            "https://evil.example",
            "evil.example, api.example.com",
            "https, https",
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    let res = app
        .send(proxied(
            "http://api.example.com",
            "api.example.com",
            "https",
        ))
        .await;
    assert_eq!(res.status, 403, "scheme counts: {}", res.text());
}

#[actix_web::test]
async fn credentials_and_exposed_headers_go_only_to_cors_origins() {
    let app = app()
        .http(|h| h.cors_origins = vec!["https://ui.example.com".into()])
        .start()
        .await;
    let get = |origin: &'static str| {
        TestRequest::get()
            .uri("/api/version")
            .insert_header(("origin", origin))
    };
    let res = app.send(get("https://ui.example.com")).await;
    assert_eq!(res.header("access-control-allow-credentials"), Some("true"));
    let exposed = res
        .header("access-control-expose-headers")
        .unwrap()
        .to_ascii_lowercase();
    for name in [
        "x-om-operation",
        "x-request-id",
        "retry-after",
        "x-ratelimit-remaining",
    ] {
        assert!(exposed.contains(name), "{name} in {exposed}");
    }
    for res in [
        app.send(get("https://evil.example")).await,
        app.get("/api/version").await,
        app.get("/api/nope").await,
    ] {
        assert_eq!(res.header("access-control-allow-credentials"), None);
        assert_eq!(res.header("access-control-allow-origin"), None);
    }
}

#[actix_web::test]
async fn preflights_allow_every_header_the_api_reads_and_refuse_as_json() {
    use actix_web::http::Method;
    let app = app()
        .http(|h| h.cors_origins = vec!["https://ui.example.com".into()])
        .start()
        .await;
    let preflight = |origin: &'static str, method: &'static str, headers: &str| {
        TestRequest::default()
            .method(Method::OPTIONS)
            .uri("/api/auth/roles/acl")
            .insert_header(("origin", origin))
            .insert_header(("access-control-request-method", method))
            .insert_header(("access-control-request-headers", headers.to_string()))
    };
    // Every header the API reads (the list `headers::every_header_read_is_allowed`
    // checks against the sources), in one preflight.
    let wanted = stoa_core::http::ALLOWED_HEADERS.join(", ");
    assert!(wanted.contains("x-om-ext-optimistic-lock-expected-updated-at"));
    let res = app
        .send(preflight("https://ui.example.com", "PUT", &wanted))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.header("access-control-allow-credentials"), Some("true"));
    let allowed = res
        .header("access-control-allow-headers")
        .unwrap()
        .to_ascii_lowercase();
    for name in wanted.split(", ").map(str::trim) {
        assert!(allowed.contains(name), "{name} in {allowed}");
    }

    let res = app
        .send(preflight("https://evil.example", "PUT", "content-type"))
        .await;
    assert_eq!(res.status, 403);
    assert!(res.json()["error"].as_str().unwrap().contains("Origin"));
    assert_eq!(res.header("access-control-allow-origin"), None);
    assert_eq!(res.header("access-control-allow-credentials"), None);

    let res = app
        .send(preflight("https://ui.example.com", "PUT", "x-unknown"))
        .await;
    assert_eq!(res.status, 400);
    assert!(res.json()["error"].as_str().unwrap().contains("x-unknown"));

    let res = app
        .send(preflight("https://ui.example.com", "TRACE", ""))
        .await;
    assert_eq!(res.status, 400);
    assert!(res.json()["error"].as_str().unwrap().contains("TRACE"));
}
