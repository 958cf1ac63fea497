//! Logout, refresh-token rotation and the cookie refresh redirect.

use actix_web::test::TestRequest;
use serde_json::json;

use super::support::*;

async fn remembered_login<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
) -> (String, String) {
    let res = app
        .send(form(
            "/api/auth/login",
            "email=admin@acme.com&password=secret&remember=1",
        ))
        .await;
    assert_eq!(res.status, 200);
    let body = res.json();
    (
        body["token"].as_str().unwrap().to_string(),
        body["refreshToken"].as_str().unwrap().to_string(),
    )
}

#[actix_web::test]
async fn logout_with_a_bearer_token_revokes_the_session() {
    let app = start().await;
    acme(&app.db).await;
    let (token, _) = remembered_login(&app).await;
    let res = app
        .send(bearer(TestRequest::post().uri("/api/auth/logout"), &token))
        .await;
    assert_eq!(res.status, 302);
    assert_eq!(res.header("location"), Some("http://localhost:3000/login"));
    let set = cookies(&res);
    assert!(
        set.iter()
            .any(|c| c.starts_with("auth_token=") && c.contains("Max-Age=0")),
        "{set:?}"
    );
    assert!(
        set.iter()
            .any(|c| c.starts_with("session_token=") && c.contains("Max-Age=0")),
        "{set:?}"
    );
    assert_eq!(app.send(get("/api/auth/profile", &token)).await.status, 401);
    // The revoked token cannot log out again.
    let res = app
        .send(bearer(TestRequest::post().uri("/api/auth/logout"), &token))
        .await;
    assert_eq!(res.status, 401);
}

#[actix_web::test]
async fn logout_with_cookies_revokes_the_session_and_needs_a_credential() {
    let app = start().await;
    acme(&app.db).await;
    let res = app.send(TestRequest::post().uri("/api/auth/logout")).await;
    assert_eq!(res.status, 401);
    let (token, refresh) = remembered_login(&app).await;
    let res = app
        .send(
            TestRequest::post()
                .uri("/api/auth/logout")
                .cookie(actix_web::cookie::Cookie::new("auth_token", token.clone()))
                .cookie(actix_web::cookie::Cookie::new(
                    "session_token",
                    refresh.clone(),
                )),
        )
        .await;
    assert_eq!(res.status, 302);
    assert_eq!(app.send(get("/api/auth/profile", &token)).await.status, 401);
    let res = app
        .send(
            TestRequest::post()
                .uri("/api/auth/session/refresh")
                .set_json(json!({"refreshToken": refresh})),
        )
        .await;
    assert_eq!(res.status, 401);
}

#[actix_web::test]
async fn refresh_rotates_tokens_and_detects_reuse() {
    let app = start().await;
    acme(&app.db).await;
    let (_, first) = remembered_login(&app).await;
    let refresh = |token: String| {
        TestRequest::post()
            .uri("/api/auth/session/refresh")
            .set_json(json!({ "refreshToken": token }))
    };
    let res = app.send(refresh(first.clone())).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ok"], true);
    assert_eq!(body["expiresIn"], 28800);
    let access = body["accessToken"].as_str().unwrap().to_string();
    let second = body["refreshToken"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    assert_eq!(cookie(&res, "auth_token").as_deref(), Some(access.as_str()));
    assert_eq!(
        app.send(get("/api/auth/profile", &access)).await.status,
        200
    );

    // The rotated-away token is refused, and its reuse revokes the session.
    let res = app.send(refresh(first)).await;
    assert_eq!(res.status, 401);
    assert_eq!(
        res.json(),
        json!({"ok": false, "error": "Invalid or expired refresh token"})
    );
    assert_eq!(app.send(refresh(second)).await.status, 401);
    assert_eq!(
        app.send(get("/api/auth/profile", &access)).await.status,
        401
    );
}

#[actix_web::test]
async fn refresh_validates_its_body() {
    let app = start().await;
    for body in [
        &b"not json"[..],
        br#"{}"#,
        br#"{"refreshToken": ""}"#,
        br#"{"refreshToken": 5}"#,
    ] {
        let res = app
            .send(
                TestRequest::post()
                    .uri("/api/auth/session/refresh")
                    .insert_header(("content-type", "application/json"))
                    .set_payload(body.to_vec()),
            )
            .await;
        assert_eq!(res.status, 400);
        assert_eq!(
            res.json(),
            json!({"ok": false, "error": "Missing or invalid refresh token"})
        );
    }
    let res = app
        .send(
            TestRequest::post()
                .uri("/api/auth/session/refresh")
                .set_json(json!({"refreshToken": "f".repeat(64)})),
        )
        .await;
    assert_eq!(res.status, 401);
}

#[actix_web::test]
async fn refresh_is_rate_limited_per_token() {
    let app = start_with(|c| c.rate_limits.refresh_token = "2/60".parse().unwrap()).await;
    let body = json!({"refreshToken": "a".repeat(64)});
    for _ in 0..2 {
        let res = app
            .send(
                TestRequest::post()
                    .uri("/api/auth/session/refresh")
                    .set_json(&body),
            )
            .await;
        assert_eq!(res.status, 401);
    }
    let res = app
        .send(
            TestRequest::post()
                .uri("/api/auth/session/refresh")
                .set_json(&body),
        )
        .await;
    assert_eq!(res.status, 429);
    assert!(res.header("retry-after").is_some());
}

#[actix_web::test]
async fn cookie_refresh_redirects_with_a_fresh_token_or_to_login() {
    let app = start().await;
    acme(&app.db).await;
    let (_, refresh) = remembered_login(&app).await;
    let res = app
        .send(
            TestRequest::get()
                .uri("/api/auth/session/refresh?redirect=/backend/deals")
                .cookie(actix_web::cookie::Cookie::new("session_token", refresh)),
        )
        .await;
    assert_eq!(res.status, 302);
    assert_eq!(res.header("location"), Some("/backend/deals"));
    let token = cookie(&res, "auth_token").unwrap();
    assert_eq!(app.send(get("/api/auth/profile", &token)).await.status, 200);

    let res = app
        .get("/api/auth/session/refresh?redirect=https://evil.com/x")
        .await;
    assert_eq!(res.status, 302);
    assert_eq!(res.header("location"), Some("/login?redirect=/"));
    let res = app
        .send(
            TestRequest::get()
                .uri("/api/auth/session/refresh?redirect=/a%20b")
                .cookie(actix_web::cookie::Cookie::new("session_token", "bogus")),
        )
        .await;
    assert_eq!(res.header("location"), Some("/login?redirect=/a%20b"));
    assert!(
        cookies(&res)
            .iter()
            .any(|c| c.starts_with("session_token=") && c.contains("Max-Age=0"))
    );
}

#[actix_web::test]
async fn logout_ends_only_the_callers_own_sessions() {
    let app = start().await;
    acme(&app.db).await;
    // The victim's session, named by its refresh token.
    let (victim_access, victim_refresh) = remembered_login(&app).await;
    let res = app
        .send(form(
            "/api/auth/login",
            "email=employee@acme.com&password=secret&remember=1",
        ))
        .await;
    let attacker = res.json()["token"].as_str().unwrap().to_string();
    // Before the fix the cookie's session was deleted whoever it belonged to.
    let res = app
        .send(
            bearer(TestRequest::post().uri("/api/auth/logout"), &attacker).cookie(
                actix_web::cookie::Cookie::new("session_token", victim_refresh.clone()),
            ),
        )
        .await;
    assert_eq!(res.status, 302);
    assert_eq!(
        app.send(get("/api/auth/profile", &attacker)).await.status,
        401
    );
    assert_eq!(
        app.send(get("/api/auth/profile", &victim_access))
            .await
            .status,
        200
    );
    let res = app
        .send(
            TestRequest::post()
                .uri("/api/auth/session/refresh")
                .set_json(json!({"refreshToken": victim_refresh})),
        )
        .await;
    assert_eq!(res.status, 200, "the victim's session lives on");
}

#[actix_web::test]
async fn responses_with_tokens_are_not_cached_and_show_the_quota() {
    let app = start().await;
    acme(&app.db).await;
    let res = app
        .send(form(
            "/api/auth/login",
            "email=admin@acme.com&password=secret&remember=1",
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("cache-control"), Some("no-store"));
    let refresh = res.json()["refreshToken"].as_str().unwrap().to_string();

    let res = app
        .send(
            TestRequest::post()
                .uri("/api/auth/session/refresh")
                .set_json(json!({"refreshToken": refresh})),
        )
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("cache-control"), Some("no-store"));
    // Per token 15/60, per address 60/60: the token's quota is the tighter.
    assert_eq!(res.header("x-ratelimit-limit"), Some("15"));
    assert_eq!(res.header("x-ratelimit-remaining"), Some("14"));
    let next = res.json()["refreshToken"].as_str().unwrap().to_string();

    let res = app
        .send(
            TestRequest::get()
                .uri("/api/auth/session/refresh")
                .cookie(actix_web::cookie::Cookie::new("session_token", next)),
        )
        .await;
    assert_eq!(res.status, 302);
    assert_eq!(res.header("cache-control"), Some("no-store"));
    assert_eq!(res.header("x-ratelimit-limit"), Some("60"));

    let res = app
        .send(
            TestRequest::post()
                .uri("/api/auth/session/refresh")
                .set_json(json!({})),
        )
        .await;
    assert_eq!(res.status, 400);
    assert!(res.header("x-ratelimit-remaining").is_some());
}
