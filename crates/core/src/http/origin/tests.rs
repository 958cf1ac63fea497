use super::*;

#[test]
fn origins_are_normalized() {
    assert_eq!(
        origin_of("HTTPS://App.Example.com/reset?x=1").as_deref(),
        Some("https://app.example.com")
    );
    assert_eq!(
        origin_of("http://localhost:3000/").as_deref(),
        Some("http://localhost:3000")
    );
    assert_eq!(origin_of("null"), None);
    assert_eq!(origin_of("file:///etc/passwd"), None);
    assert_eq!(origin_of("https://user@evil.example"), None);
}

#[test]
fn trust_covers_own_origin_cors_and_app_url() {
    let policy = OriginPolicy {
        cors: vec!["https://ui.example.com".into()],
        app: Some("https://app.example.com".into()),
        proxy_depth: 0,
    };
    let own = Some("https://api.example.com");
    assert!(policy.trusts("https://api.example.com", own));
    assert!(policy.trusts("https://API.example.com:443", own));
    assert!(policy.trusts("https://ui.example.com", own));
    assert!(policy.trusts("https://app.example.com/x", own));
    assert!(
        !policy.trusts("http://api.example.com", own),
        "scheme counts"
    );
    assert!(
        !policy.trusts("https://api.example.com:8443", own),
        "port counts"
    );
    assert!(!policy.trusts("https://evil.example", own));
    assert!(!policy.trusts("null", own));
    assert!(!policy.cors_allows("https://app.example.com"));
}

#[test]
fn forwarded_headers_count_only_within_the_depth() {
    let req = actix_web::test::TestRequest::default()
        .insert_header(("host", "internal:8080"))
        .insert_header(("x-forwarded-host", "evil.example, api.example.com"))
        .insert_header(("x-forwarded-proto", "http, https"))
        .to_http_request();
    let at = |depth| OriginPolicy {
        proxy_depth: depth,
        ..OriginPolicy::default()
    };
    assert_eq!(
        at(0).own_origin(&req).as_deref(),
        Some("http://internal:8080")
    );
    assert_eq!(
        at(1).own_origin(&req).as_deref(),
        Some("https://api.example.com")
    );
    assert_eq!(
        at(2).own_origin(&req).as_deref(),
        Some("http://evil.example")
    );
}

#[test]
fn the_cookie_authenticates_unless_a_bearer_session_token_is_sent() {
    let with = |authorization: Option<&str>, key: bool| {
        let mut req = actix_web::test::TestRequest::default();
        if let Some(value) = authorization {
            req = req.insert_header(("authorization", value.to_string()));
        }
        if key {
            req = req.insert_header(("x-api-key", "omk_a.b"));
        }
        cookie_authenticates(req.to_http_request().headers(), true)
    };
    assert!(with(None, false));
    assert!(with(Some("Basic dTpw"), false), "a cached Basic header");
    assert!(with(None, true), "an API key beside the cookie");
    assert!(with(Some("ApiKey omk_a.b"), false));
    assert!(with(Some("Bearer omk_a.b"), false), "a key in bearer form");
    assert!(with(Some("Bearer "), false));
    assert!(
        !with(Some("Bearer eyJ.a.b"), false),
        "the bearer token wins"
    );
    assert!(!with(Some("bearer eyJ.a.b"), true));
    assert!(!cookie_authenticates(
        actix_web::test::TestRequest::default()
            .to_http_request()
            .headers(),
        false
    ));
}
