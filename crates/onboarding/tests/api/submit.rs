//! `POST /onboarding/onboarding`: every validation case names its field;
//! the accepted submission stores a hashed token and an argon2id password
//! hash, and e-mails a working link; a repeat refreshes the request.

use serde_json::{Value, json};

use super::support::*;

/// The `fieldErrors` keys of a 400 answer (shape I), after checking the shape.
fn field_errors(res: &stoa_testkit::TestResponse) -> Vec<String> {
    assert_eq!(res.status, 400, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ok"], false, "{body}");
    assert_eq!(
        body["error"], "Please check the form and try again.",
        "{body}"
    );
    let mut keys: Vec<String> = body["fieldErrors"]
        .as_object()
        .unwrap_or_else(|| panic!("fieldErrors in {body}"))
        .iter()
        .map(|(k, v)| {
            assert!(v.is_string(), "one message per field: {body}");
            k.clone()
        })
        .collect();
    keys.sort();
    keys
}

fn with(field: &str, value: Value) -> Value {
    let mut body = form("ada@example.com");
    body[field] = value;
    body
}

fn without(field: &str) -> Value {
    let mut body = form("ada@example.com");
    body.as_object_mut().unwrap().remove(field);
    body
}

#[actix_web::test]
async fn every_invalid_field_is_named_and_nothing_is_stored() {
    let app = start().await;
    let cases: Vec<(Value, &[&str])> = vec![
        (without("email"), &["email"]),
        (with("email", json!("not-an-email")), &["email"]),
        (
            with("email", json!(format!("{}@example.com", "a".repeat(250)))),
            &["email"],
        ),
        (without("firstName"), &["firstName"]),
        (with("firstName", json!("   ")), &["firstName"]),
        (with("firstName", json!("x".repeat(121))), &["firstName"]),
        (without("lastName"), &["lastName"]),
        (with("lastName", json!("y".repeat(121))), &["lastName"]),
        (without("organizationName"), &["organizationName"]),
        (
            with("organizationName", json!("z".repeat(241))),
            &["organizationName"],
        ),
        (without("password"), &["confirmPassword", "password"]),
        // The accounts' policy (digit, upper case, special character, length).
        (
            json!({"password": "short", "confirmPassword": "short"}),
            &[
                "email",
                "firstName",
                "lastName",
                "organizationName",
                "password",
                "termsAccepted",
            ],
        ),
        (
            json!({"email": "a@b.co", "firstName": "A", "lastName": "B", "organizationName": "C",
                   "password": format!("Aa1!{}", "x".repeat(300)),
                   "confirmPassword": format!("Aa1!{}", "x".repeat(300)), "termsAccepted": true}),
            &["password"],
        ),
        (without("confirmPassword"), &["confirmPassword"]),
        (
            with("confirmPassword", json!("Str0ng-Passw0rd?")),
            &["confirmPassword"],
        ),
        (without("termsAccepted"), &["termsAccepted"]),
        (with("termsAccepted", json!(false)), &["termsAccepted"]),
        (with("locale", json!("x")), &["locale"]),
        (with("locale", json!("en<script>")), &["locale"]),
        // A wrong type is named too.
        (with("termsAccepted", json!("yes")), &["termsAccepted"]),
        (with("email", json!(42)), &["email"]),
    ];
    for (body, expected) in cases {
        let res = submit(&app, &body).await;
        assert_eq!(field_errors(&res), expected, "{body}: {}", res.text());
    }
    // Everything missing: every required field at once.
    let res = submit(&app, &json!({})).await;
    assert_eq!(
        field_errors(&res),
        [
            "confirmPassword",
            "email",
            "firstName",
            "lastName",
            "organizationName",
            "password",
            "termsAccepted"
        ]
    );
    // The policy's own message reaches the client.
    let res = submit(&app, &with("password", json!("alllowercase1!"))).await;
    let message = res.json()["fieldErrors"]["password"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!message.is_empty());
    assert!(res.json()["fieldErrors"]["confirmPassword"].is_string());

    // A body that is not JSON.
    let res = app
        .send(
            actix_web::test::TestRequest::post()
                .uri(SUBMIT)
                .insert_header(("content-type", "application/json"))
                .set_payload("{\"broken"),
        )
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["ok"], false);
    assert_eq!(res.json()["error"], "Invalid payload");

    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM onboarding_requests").await,
        0
    );
    assert!(stoa_testkit::outbox_events(&app.db).await.is_empty());
}

#[actix_web::test]
async fn a_submission_stores_hashes_only_and_emails_a_working_link() {
    let app = start().await;
    let res = submit(&app, &form("  Ada@Example.COM ")).await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true, "email": "ada@example.com"}));
    assert!(res.header("x-ratelimit-limit").is_some());
    assert!(res.header("x-ratelimit-remaining").is_some());

    let mails = mails_to(&app.db, "ada@example.com").await;
    assert_eq!(mails.len(), 1);
    assert_eq!(
        mails[0]["subject"],
        "Confirm your e-mail to create your workspace"
    );
    let link = link_for(&app.db, "ada@example.com").await;
    assert!(
        link.starts_with(&format!(
            "{PUBLIC_URL}/api/onboarding/onboarding/verify?token="
        )),
        "{link}"
    );
    let token = token_for_email(&app.db, "ada@example.com").await;
    assert_eq!(token.len(), 64);
    assert!(mails[0]["html"].as_str().unwrap().contains(&token));

    // Stored: the token's SHA-256, never the token; an argon2id hash.
    let stored = text(&app.db, "SELECT token_hash AS v FROM onboarding_requests").await;
    assert_ne!(stored, token);
    assert_eq!(stored.len(), 64);
    assert_eq!(
        count(
            &app.db,
            &format!("SELECT count(*) AS n FROM onboarding_requests WHERE token_hash LIKE '%{token}%' OR password_hash LIKE '%{PASSWORD}%'")
        )
        .await,
        0
    );
    let hash = text(
        &app.db,
        "SELECT password_hash AS v FROM onboarding_requests",
    )
    .await;
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    let expires = count(
        &app.db,
        "SELECT extract(epoch FROM expires_at - now())::bigint AS n FROM onboarding_requests",
    )
    .await;
    assert!(
        (24 * 3600 - 120..=24 * 3600).contains(&expires),
        "{expires}"
    );

    // The e-mailed link works as it is.
    let res = app
        .send(
            actix_web::test::TestRequest::get()
                .uri(&path_of(&link))
                .insert_header(("accept", "application/json")),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["email"], "ada@example.com");
}

#[actix_web::test]
async fn a_repeat_after_the_mail_window_refreshes_the_one_pending_request_and_resends() {
    let app = start().await;
    assert_eq!(submit(&app, &form("ada@example.com")).await.status, 201);
    let first = token_for_email(&app.db, "ada@example.com").await;
    // Inside the window a repeat sends nothing (`mail_window.rs`).
    exec(
        &app.db,
        "UPDATE onboarding_mail_sends SET sent_at = now() - interval '601 seconds'",
    )
    .await;
    let mut again = form("ada@example.com");
    again["organizationName"] = json!("Difference Engines");
    assert_eq!(submit(&app, &again).await.status, 201);
    let second = token_for_email(&app.db, "ada@example.com").await;
    assert_ne!(first, second);
    assert_eq!(mails_to(&app.db, "ada@example.com").await.len(), 2);
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM onboarding_requests").await,
        1
    );
    assert_eq!(
        text(
            &app.db,
            "SELECT organization_name AS v FROM onboarding_requests"
        )
        .await,
        "Difference Engines"
    );
    // The earlier link no longer works; the new one does, with the new name.
    let res = verify(&app, &first).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["ok"], false);
    assert_eq!(res.json()["code"], "invalid_token");
    let res = verify(&app, &second).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        text(
            &app.db,
            "SELECT name AS v FROM tenants WHERE name <> '' ORDER BY created_at DESC LIMIT 1"
        )
        .await,
        "Difference Engines"
    );
}
