use serde_json::json;
use stoa_auth::testing::token_for;

use super::support::*;

#[actix_web::test]
async fn profile_shows_email_name_and_roles() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let token = token_for(&app.db, acme.admin).await;
    let res = app.send(get("/api/auth/profile", &token)).await;
    assert_eq!(res.status, 200);
    assert_eq!(
        res.json(),
        json!({"email": "admin@acme.com", "name": null, "roles": ["admin"]})
    );
}

#[actix_web::test]
async fn profile_update_validates_its_input() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let token = token_for(&app.db, acme.admin).await;
    let cases = [
        (json!({}), "Invalid profile update."),
        (json!({"password": "N3w!pass"}), "Invalid profile update."),
        (
            json!({"currentPassword": "secret"}),
            "Invalid profile update.",
        ),
        (json!({"email": "not-an-email"}), "Invalid profile update."),
        (json!({"email": 5}), "Invalid profile update."),
        (json!({"email": "boss@acme.com"}), "Invalid profile update."),
        (
            json!({"email": "employee@acme.com", "currentPassword": "secret"}),
            "Email already in use",
        ),
        (
            json!({"currentPassword": "wrong", "password": "N3w!pass"}),
            "Current password is incorrect.",
        ),
        (
            json!({"currentPassword": "secret", "password": "weak"}),
            "Password does not meet the requirements.",
        ),
    ];
    for (body, error) in cases {
        let res = app
            .send(put_json("/api/auth/profile", &token, body.clone()))
            .await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        assert_eq!(res.json()["error"], error, "{body}");
        assert!(res.json()["issues"].is_array(), "{body}");
    }
    let res = app.send(get("/api/auth/profile", &token)).await;
    assert_eq!(res.json()["email"], "admin@acme.com");
}

#[actix_web::test]
async fn email_change_returns_a_new_token() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let token = token_for(&app.db, acme.admin).await;
    let res = app
        .send(put_json(
            "/api/auth/profile",
            &token,
            json!({"email": "Boss@Acme.com", "currentPassword": PASSWORD}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "email": "boss@acme.com"}));
    assert_eq!(res.header("cache-control"), Some("no-store"));
    let fresh = cookie(&res, "auth_token").unwrap();
    assert_eq!(keys().verify(&fresh).unwrap().email, "boss@acme.com");
    let res = app.send(get("/api/auth/profile", &token)).await;
    assert_eq!(res.json()["email"], "boss@acme.com");
}

#[actix_web::test]
async fn password_change_ends_other_sessions_and_keeps_this_one() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let this = token_for(&app.db, acme.admin).await;
    let other = token_for(&app.db, acme.admin).await;
    let res = app
        .send(put_json(
            "/api/auth/profile",
            &this,
            json!({"currentPassword": PASSWORD, "password": "N3w!passw0rd"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(app.send(get("/api/auth/profile", &this)).await.status, 200);
    assert_eq!(app.send(get("/api/auth/profile", &other)).await.status, 401);
    assert_eq!(
        app.send(login_form("admin@acme.com", PASSWORD))
            .await
            .status,
        401
    );
    assert_eq!(
        app.send(login_form("admin@acme.com", "N3w!passw0rd"))
            .await
            .status,
        200
    );
}

#[actix_web::test]
async fn an_email_change_needs_the_current_password_and_tells_the_old_address() {
    let app = start_with(|c| c.rate_limits.profile_password = "3/300".parse().unwrap()).await;
    let acme = acme(&app.db).await;
    let token = token_for(&app.db, acme.admin).await;
    // A stolen session alone can no longer move the account to another
    // address (and then reset its password there).
    let res = app
        .send(put_json(
            "/api/auth/profile",
            &token,
            json!({"email": "thief@evil.com"}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["issues"][0]["path"], json!(["currentPassword"]));
    assert_eq!(res.header("x-ratelimit-limit"), Some("3"));
    assert_eq!(res.header("x-ratelimit-remaining"), Some("3"));
    // Wrong current passwords count, and run out.
    for remaining in ["2", "1", "0"] {
        let res = app
            .send(put_json(
                "/api/auth/profile",
                &token,
                json!({"email": "thief@evil.com", "currentPassword": "guess-1"}),
            ))
            .await;
        assert_eq!(res.status, 400);
        assert_eq!(res.json()["error"], "Current password is incorrect.");
        assert_eq!(res.header("x-ratelimit-remaining"), Some(remaining));
    }
    let res = app
        .send(put_json(
            "/api/auth/profile",
            &token,
            json!({"email": "thief@evil.com", "currentPassword": PASSWORD}),
        ))
        .await;
    assert_eq!(res.status, 429, "even the right password waits now");
    assert!(res.header("retry-after").is_some());
    assert_eq!(res.header("x-ratelimit-remaining"), Some("0"));
    let res = app.send(get("/api/auth/profile", &token)).await;
    assert_eq!(res.json()["email"], "admin@acme.com");

    // The owner, with the password, changes the address; the old one is told.
    let employee = token_for(&app.db, acme.employee).await;
    let res = app
        .send(put_json(
            "/api/auth/profile",
            &employee,
            json!({"email": "worker@acme.com", "currentPassword": PASSWORD}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.header("x-ratelimit-remaining"), Some("3"));
    let mut conn = app.db.conn().await.unwrap();
    let notices: Vec<(String, String)> = {
        use diesel_async::RunQueryDsl;
        diesel::sql_query("SELECT recipient, body FROM mail_outbox")
            .load::<Notice>(&mut *conn)
            .await
            .unwrap()
            .into_iter()
            .map(|n| (n.recipient, n.body))
            .collect()
    };
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].0, "employee@acme.com");
    assert!(notices[0].1.contains("worker@acme.com"), "{}", notices[0].1);
}

#[derive(diesel::QueryableByName)]
struct Notice {
    #[diesel(sql_type = diesel::sql_types::Text)]
    recipient: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    body: String,
}
