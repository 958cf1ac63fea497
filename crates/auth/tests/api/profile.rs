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
        (
            json!({"email": "employee@acme.com"}),
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
            json!({"email": "Boss@Acme.com"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "email": "boss@acme.com"}));
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
