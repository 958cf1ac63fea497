use actix_web::test::TestRequest;
use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn login_returns_a_token_with_the_reference_claims_and_sets_cookies() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let res = app.send(login_form("Admin@Acme.com", PASSWORD)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ok"], true);
    assert_eq!(body["redirect"], "/backend");
    assert!(
        body.get("refreshToken").is_none(),
        "refresh token only with remember"
    );
    let token = body["token"].as_str().unwrap();
    let claims = keys().verify(token).expect("valid token");
    assert_eq!(claims.sub, acme.admin);
    assert_eq!(claims.tenant_id, Some(acme.tenant_id));
    assert_eq!(claims.org_id, Some(acme.organization_id));
    assert_eq!(claims.email, "admin@acme.com");
    assert_eq!(claims.roles, vec!["admin".to_string()]);
    assert_eq!(
        (claims.iss.as_str(), claims.aud.as_str()),
        ("open-mercato", "staff")
    );
    assert_eq!(claims.exp - claims.iat, 8 * 3600);
    assert_eq!(cookie(&res, "auth_token").as_deref(), Some(token));
    let auth_cookie = cookies(&res)
        .into_iter()
        .find(|c| c.starts_with("auth_token="))
        .unwrap();
    assert!(
        auth_cookie.contains("HttpOnly") && auth_cookie.contains("SameSite=Lax"),
        "{auth_cookie}"
    );
    assert!(cookie(&res, "session_token").is_some());

    // The raw claim names clients decode.
    let raw: serde_json::Value = jsonwebtoken::dangerous::insecure_decode_claims(token).unwrap();
    for key in [
        "sub", "sid", "tenantId", "orgId", "email", "roles", "iat", "exp", "iss", "aud",
    ] {
        assert!(raw.get(key).is_some(), "claim {key} missing in {raw}");
    }
    let profile = app.send(get("/api/auth/profile", token)).await;
    assert_eq!(profile.status, 200);
}

#[actix_web::test]
async fn remember_me_returns_a_refresh_token_and_redirect_is_sanitized() {
    let app = start().await;
    acme(&app.db).await;
    let res = app
        .send(form(
            "/api/auth/login",
            "email=employee@acme.com&password=secret&remember=on&redirect=https%3A%2F%2Fevil.com%2F",
        ))
        .await;
    assert_eq!(res.status, 200);
    let body = res.json();
    assert_eq!(body["redirect"], "/backend");
    assert_eq!(body["refreshToken"].as_str().unwrap().len(), 64);
    let res = app
        .send(form(
            "/api/auth/login",
            "email=employee@acme.com&password=secret&redirect=%2Fdeals%3Fx%3D1",
        ))
        .await;
    assert_eq!(res.json()["redirect"], "/deals?x=1");
}

#[actix_web::test]
async fn invalid_forms_are_400_with_ok_false() {
    let app = start().await;
    acme(&app.db).await;
    let json = app
        .send(
            TestRequest::post()
                .uri("/api/auth/login")
                .set_json(json!({"email": "admin@acme.com", "password": "secret"})),
        )
        .await;
    assert_eq!(json.status, 400);
    assert_eq!(
        json.json(),
        json!({"ok": false, "error": "Invalid email or password"})
    );
    for body in [
        "password=secret",
        "email=not-an-email&password=secret",
        "email=admin@acme.com&password=abc",
        "email=admin@acme.com&password=secret&tenantId=nope",
        "email=admin@acme.com&password=secret&email=x",
    ] {
        let res = app.send(form("/api/auth/login", body)).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        assert_eq!(res.json()["ok"], false);
    }
}

#[actix_web::test]
async fn wrong_password_and_unknown_user_look_the_same() {
    let app = start().await;
    acme(&app.db).await;
    let wrong = app
        .send(login_form("admin@acme.com", "wrong-password"))
        .await;
    let unknown = app
        .send(login_form("nobody@acme.com", "wrong-password"))
        .await;
    assert_eq!(wrong.status, 401);
    assert_eq!(unknown.status, 401);
    assert_eq!(
        wrong.json(),
        json!({"ok": false, "error": "Invalid email or password"})
    );
    assert_eq!(wrong.body, unknown.body);
}

#[actix_web::test]
async fn require_role_refuses_users_without_it() {
    let app = start().await;
    acme(&app.db).await;
    let res = app
        .send(form(
            "/api/auth/login",
            "email=employee@acme.com&password=secret&requireRole=admin,superadmin",
        ))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["ok"], false);
    let res = app
        .send(form(
            "/api/auth/login",
            "email=admin@acme.com&password=secret&role=admin",
        ))
        .await;
    assert_eq!(res.status, 200);
}

/// Gives `user` the password `password`.
async fn set_password<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    user: uuid::Uuid,
    password: &str,
) {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    let hash = stoa_auth::password::hash_password(password.to_string())
        .await
        .unwrap();
    let mut conn = app.db.conn().await.unwrap();
    diesel::update(stoa_auth::schema::users::table.find(user))
        .set(stoa_auth::schema::users::password_hash.eq(hash))
        .execute(&mut *conn)
        .await
        .unwrap();
}

#[actix_web::test]
async fn an_email_taken_over_in_another_tenant_does_not_lock_the_owner_out() {
    let app = start().await;
    let acme = acme(&app.db).await;
    // A user of another tenant renames themself to the owner's address
    // (e-mails are unique per tenant only). Before the fix, a login without
    // tenantId then found nobody and the owner could not sign in.
    let other = stoa_auth::testing::seed_tenant(&app.db, "Other", "other.com").await;
    let twin = stoa_auth::testing::user_with_features(
        &app.db,
        &other,
        "superadmin@acme.com",
        &[],
        None,
        None,
    )
    .await;
    set_password(&app, twin, "Tw1n-pass!").await;

    let res = app.send(login_form("superadmin@acme.com", PASSWORD)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let claims = keys()
        .verify(res.json()["token"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        (claims.sub, claims.tenant_id),
        (acme.superadmin, Some(acme.tenant_id))
    );

    // The other account's own password opens the other account.
    let res = app
        .send(login_form("superadmin@acme.com", "Tw1n-pass!"))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let claims = keys()
        .verify(res.json()["token"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        (claims.sub, claims.tenant_id),
        (twin, Some(other.tenant_id))
    );

    // A wrong password opens neither.
    let res = app
        .send(login_form("superadmin@acme.com", "wrong-pass"))
        .await;
    assert_eq!(res.status, 401);
    assert_eq!(res.json()["error"], "Invalid email or password");
}

#[actix_web::test]
async fn one_password_for_accounts_in_two_tenants_asks_for_a_tenant() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let other = stoa_auth::testing::seed_tenant(&app.db, "Other", "other.com").await;
    let twin =
        stoa_auth::testing::user_with_features(&app.db, &other, "admin@acme.com", &[], None, None)
            .await;
    set_password(&app, twin, PASSWORD).await;
    let res = app.send(login_form("admin@acme.com", PASSWORD)).await;
    assert_eq!(res.status, 409, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ok"], false);
    assert_eq!(body["code"], "tenant_required");
    let mut tenants: Vec<String> = body["tenantIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    tenants.sort();
    let mut expected = vec![acme.tenant_id.to_string(), other.tenant_id.to_string()];
    expected.sort();
    assert_eq!(tenants, expected);
    assert!(res.cookie("auth_token").is_none());

    // With the tenant, each signs in.
    for (tenant, user) in [(acme.tenant_id, acme.admin), (other.tenant_id, twin)] {
        let res = app
            .send(form(
                "/api/auth/login",
                &format!("email=admin@acme.com&password=secret&tenantId={tenant}"),
            ))
            .await;
        assert_eq!(res.status, 200);
        let claims = keys()
            .verify(res.json()["token"].as_str().unwrap())
            .unwrap();
        assert_eq!((claims.sub, claims.tenant_id), (user, Some(tenant)));
    }
}

#[actix_web::test]
async fn successful_logins_from_one_address_never_count() {
    let app = start().await;
    acme(&app.db).await;
    let peer = "10.0.0.1:4000".parse::<std::net::SocketAddr>().unwrap();
    for _ in 0..25 {
        let res = app
            .send(login_form("admin@acme.com", PASSWORD).peer_addr(peer))
            .await;
        assert_eq!(res.status, 200);
    }
}

#[actix_web::test]
async fn failures_from_one_address_are_limited_per_address() {
    let app = start_with(|c| c.rate_limits.login_ip = "3/60".parse().unwrap()).await;
    acme(&app.db).await;
    let peer: std::net::SocketAddr = "10.9.9.9:4000".parse().unwrap();
    for n in 0..3 {
        let res = app
            .send(login_form(&format!("x{n}@acme.com"), "wrong-pass").peer_addr(peer))
            .await;
        assert_eq!(res.status, 401);
    }
    let res = app
        .send(login_form("admin@acme.com", PASSWORD).peer_addr(peer))
        .await;
    assert_eq!(res.status, 429);
    // Another address is not affected: no shared global bucket.
    let other: std::net::SocketAddr = "10.9.9.10:4000".parse().unwrap();
    let res = app
        .send(login_form("admin@acme.com", PASSWORD).peer_addr(other))
        .await;
    assert_eq!(res.status, 200);
    // A spoofed X-Forwarded-For changes nothing without a trusted proxy depth.
    let res = app
        .send(
            login_form("admin@acme.com", PASSWORD)
                .peer_addr(peer)
                .insert_header(("x-forwarded-for", "1.2.3.4")),
        )
        .await;
    assert_eq!(res.status, 429);
}

#[actix_web::test]
async fn rate_limits_can_be_turned_off() {
    let app = start_with(|c| {
        c.rate_limits = stoa_auth::config::RateLimits {
            enabled: false,
            ..Default::default()
        }
    })
    .await;
    acme(&app.db).await;
    // With limits on, these would lock the account after five.
    for _ in 0..7 {
        let res = app.send(login_form("admin@acme.com", "wrong-pass")).await;
        assert_eq!(res.status, 401);
    }
}

#[actix_web::test]
async fn autologin_redirects_to_login_unless_configured() {
    let app = start().await;
    let res = app.get("/api/auth/autologin").await;
    assert_eq!(res.status, 307);
    assert_eq!(res.header("location"), Some("/login"));

    let app = start_with(|c| {
        c.autologin = Some(stoa_auth::config::Autologin {
            email: "admin@acme.com".into(),
            password: stoa_core::config::Secret::new(PASSWORD),
            tenant: None,
        })
    })
    .await;
    acme(&app.db).await;
    let res = app.get("/api/auth/autologin?redirect=/deals").await;
    assert_eq!(res.status, 307);
    assert_eq!(res.header("location"), Some("/deals"));
    let token = cookie(&res, "auth_token").unwrap();
    assert_eq!(app.send(get("/api/auth/profile", &token)).await.status, 200);
    let res = app.get("/api/auth/autologin?redirect=//evil.com").await;
    assert_eq!(res.header("location"), Some("/backend"));

    let app = start_with(|c| {
        c.autologin = Some(stoa_auth::config::Autologin {
            email: "admin@acme.com".into(),
            password: stoa_core::config::Secret::new("wrong-one"),
            tenant: None,
        })
    })
    .await;
    acme(&app.db).await;
    let res = app.get("/api/auth/autologin").await;
    assert_eq!(res.header("location"), Some("/login"));
    assert!(cookie(&res, "auth_token").is_none());
}
