//! The attacker's page at another origin, the victim's browser signed in:
//! forged writes ride on the session cookie whatever else the browser adds,
//! and a forged sign-in would put the victim in the attacker's account.

use actix_web::cookie::Cookie;
use actix_web::test::TestRequest;
use serde_json::json;

use super::support::*;

const EVIL: &str = "https://evil.example";

async fn role_count(db: &stoa_core::db::Db, name: &str) -> i64 {
    use diesel::dsl::count_star;
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    diesel::table! { roles (id) { id -> Uuid, name -> Text } }
    let mut conn = db.conn().await.unwrap();
    roles::table
        .filter(roles::name.eq(name))
        .select(count_star())
        .first(&mut *conn)
        .await
        .unwrap()
}

#[actix_web::test]
async fn a_cookie_session_is_checked_whatever_other_headers_come_with_it() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let token = stoa_auth::testing::token_for(&app.db, acme.superadmin).await;
    let forged = |name: &str| {
        TestRequest::post()
            .uri("/api/auth/roles")
            .cookie(Cookie::new("auth_token", token.clone()))
            .insert_header(("origin", EVIL))
            .set_json(json!({"name": name}))
    };
    // Before the fix each of these answered 201: any `Authorization` or
    // `x-api-key` switched the guard off while the cookie signed the request in.
    let attempts = [
        (
            "Pwned basic",
            forged("Pwned basic").insert_header(("authorization", "Basic dTpw")),
        ),
        (
            "Pwned key",
            forged("Pwned key").insert_header(("x-api-key", "omk_00000000.ff")),
        ),
        ("Pwned plain", forged("Pwned plain")),
    ];
    for (name, req) in attempts {
        let res = app.send(req).await;
        assert_eq!(res.status, 403, "{name}: {}", res.text());
        assert_eq!(role_count(&app.db, name).await, 0, "{name} was created");
    }

    // The legitimate paths: the same request from the API's own origin, and
    // a bearer token from anywhere (a browser cannot attach one cross-site).
    let res = app
        .send(
            TestRequest::post()
                .uri("/api/auth/roles")
                .cookie(Cookie::new("auth_token", token.clone()))
                .insert_header(("origin", "http://localhost:8080"))
                .insert_header(("authorization", "Basic dTpw"))
                .set_json(json!({"name": "Same origin"})),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let res = app
        .send(
            post_json("/api/auth/roles", &token, json!({"name": "By bearer"}))
                .insert_header(("origin", EVIL)),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
}

#[actix_web::test]
async fn a_cross_site_form_login_is_refused() {
    let app = start().await;
    acme(&app.db).await;
    for (header, value) in [
        ("origin", EVIL),
        ("referer", "https://evil.example/login.html"),
        ("origin", "null"),
        // The API's host over another scheme is another origin.
        ("origin", "https://localhost:8080"),
    ] {
        let res = app
            .send(login_form("admin@acme.com", PASSWORD).insert_header((header, value)))
            .await;
        assert_eq!(res.status, 403, "{header}: {value}: {}", res.text());
        assert_eq!(
            res.json(),
            json!({
                "ok": false,
                "error": "Cross-site sign-in refused: this origin may not sign in",
                "code": "cross_site_login"
            })
        );
        assert!(cookie(&res, "auth_token").is_none(), "no session cookie");
    }
    // From the API's own origin, and from clients that name no origin.
    let res = app
        .send(
            login_form("admin@acme.com", PASSWORD)
                .insert_header(("origin", "http://localhost:8080")),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app.send(login_form("admin@acme.com", PASSWORD)).await;
    assert_eq!(res.status, 200, "{}", res.text());
}
