use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::json;

use super::support::*;

diesel::table! {
    mail_outbox (id) {
        id -> Uuid,
        recipient -> Text,
        body -> Text,
    }
}

async fn mails<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
) -> Vec<(String, String)> {
    let mut conn = app.db.conn().await.unwrap();
    mail_outbox::table
        .select((mail_outbox::recipient, mail_outbox::body))
        .load(&mut *conn)
        .await
        .unwrap()
}

fn token_in(body: &str) -> String {
    let start = body.find("/reset/").unwrap() + "/reset/".len();
    body[start..start + 64].to_string()
}

#[actix_web::test]
async fn reset_never_reveals_whether_the_account_exists() {
    let app = start().await;
    acme(&app.db).await;
    let known = app
        .send(form("/api/auth/reset", "email=admin%40acme.com"))
        .await;
    let unknown = app
        .send(form("/api/auth/reset", "email=ghost%40acme.com"))
        .await;
    assert_eq!((known.status.as_u16(), unknown.status.as_u16()), (200, 200));
    assert_eq!(known.json(), json!({"ok": true}));
    assert_eq!(known.body, unknown.body);
    let sent = mails(&app).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, "admin@acme.com");
    assert!(
        sent[0].1.contains("http://localhost:3000/reset/"),
        "{}",
        sent[0].1
    );
}

#[actix_web::test]
async fn reset_checks_email_origin_and_configuration() {
    let app = start().await;
    let res = app.send(form("/api/auth/reset", "email=nope")).await;
    assert_eq!(res.status, 400);
    let res = app
        .send(
            form("/api/auth/reset", "email=a%40b.com")
                .insert_header(("origin", "https://evil.example")),
        )
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json(), json!({"error": "Invalid request origin"}));
    let res = app
        .send(
            form("/api/auth/reset", "email=a%40b.com")
                .insert_header(("origin", "http://localhost:3000")),
        )
        .await;
    assert_eq!(res.status, 200);

    let unconfigured = start_with(|c| c.app_url = None).await;
    let res = unconfigured
        .send(form("/api/auth/reset", "email=a%40b.com"))
        .await;
    assert_eq!(res.status, 500);
    assert_eq!(
        res.json()["error"],
        "Password reset email origin is not configured"
    );
}

#[actix_web::test]
async fn reset_requests_are_rate_limited_per_account() {
    let app = start().await;
    for _ in 0..3 {
        assert_eq!(
            app.send(form("/api/auth/reset", "email=x%40acme.com"))
                .await
                .status,
            200
        );
    }
    let res = app
        .send(form("/api/auth/reset", "email=x%40acme.com"))
        .await;
    assert_eq!(res.status, 429);
    assert!(res.header("retry-after").is_some());
}

#[actix_web::test]
async fn confirm_sets_the_password_once_and_ends_sessions() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let session = stoa_auth::testing::token_for(&app.db, acme.employee).await;
    app.send(form("/api/auth/reset", "email=employee%40acme.com"))
        .await;
    let token = token_in(&mails(&app).await[0].1);

    for (body, error) in [
        ("password=N3w!passw0rd".to_string(), "Invalid request"),
        (
            "token=short&password=N3w!passw0rd".to_string(),
            "Invalid request",
        ),
        (
            format!("token={token}&password=weak"),
            "Password does not meet the requirements: needs at least 6 characters, a digit, an uppercase letter, a special character.",
        ),
        (
            format!("token={}&password=N3w!passw0rd", "0".repeat(64)),
            "Invalid or expired token",
        ),
    ] {
        let res = app.send(form("/api/auth/reset/confirm", &body)).await;
        assert_eq!(res.status, 400, "{body}");
        assert_eq!(res.json(), json!({"ok": false, "error": error}), "{body}");
    }

    let body = format!("token={token}&password=N3w!passw0rd");
    let res = app.send(form("/api/auth/reset/confirm", &body)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "redirect": "/login"}));
    assert_eq!(
        app.send(get("/api/auth/profile", &session)).await.status,
        401
    );
    assert_eq!(
        app.send(login_form("employee@acme.com", "N3w!passw0rd"))
            .await
            .status,
        200
    );
    // A token works once.
    let res = app.send(form("/api/auth/reset/confirm", &body)).await;
    assert_eq!(
        res.json(),
        json!({"ok": false, "error": "Invalid or expired token"})
    );
}
