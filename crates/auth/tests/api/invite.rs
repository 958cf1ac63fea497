//! Resending invitations: new token, earlier tokens dead, the mail, every
//! refusal, the rate limit, and a mail failure.

use std::sync::Arc;

use actix_web::test::TestRequest;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_auth::testing::{token_for, user_with_features};
use stoa_auth::{AuthConfig, AuthState};
use stoa_core::command::schema::action_logs;
use stoa_core::rate_limit::Rule;
use stoa_mail::{Mail, MailError, Mailer};
use uuid::Uuid;

use super::support::*;

const RESEND: &str = "/api/auth/users/resend-invite";

diesel::table! {
    mail_outbox (id) {
        id -> Uuid,
        recipient -> Text,
        body -> Text,
        created_at -> Timestamptz,
    }
}

async fn mails<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
) -> Vec<(String, String)> {
    let mut conn = app.db.conn().await.unwrap();
    mail_outbox::table
        .order(mail_outbox::created_at.asc())
        .select((mail_outbox::recipient, mail_outbox::body))
        .load(&mut *conn)
        .await
        .unwrap()
}

fn token_in(body: &str) -> String {
    let start =
        body.find("http://localhost:3000/reset/").unwrap() + "http://localhost:3000/reset/".len();
    body[start..start + 64].to_string()
}

/// Generous limits, so a test can make many requests.
fn unlimited(c: &mut AuthConfig) {
    c.rate_limits.resend_invite_user = Rule::per_minute(1000);
}

#[actix_web::test]
async fn a_resent_invite_replaces_every_earlier_token() {
    let app = start_with(unlimited).await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let invited = user_with_features(&app.db, &acme, "new@acme.com", &[], None, None).await;

    let res = app
        .send(post_json(RESEND, &admin, json!({"id": invited})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true}));
    let res = app
        .send(post_json(RESEND, &admin, json!({"id": invited})))
        .await;
    assert_eq!(res.json(), json!({"ok": true}));
    let sent = mails(&app).await;
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].0, "new@acme.com");
    assert!(sent[0].1.contains("48 hours"), "{}", sent[0].1);
    let (first, second) = (token_in(&sent[0].1), token_in(&sent[1].1));
    assert_ne!(first, second);

    // The earlier token no longer works; the new one does, once.
    let res = app
        .send(form(
            "/api/auth/reset/confirm",
            &format!("token={first}&password=N3w!passw0rd"),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.json(),
        json!({"ok": false, "error": "Invalid or expired token"})
    );
    let res = app
        .send(form(
            "/api/auth/reset/confirm",
            &format!("token={second}&password=N3w!passw0rd"),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    // Now the user has a password: no more invitations.
    let res = app
        .send(post_json(RESEND, &admin, json!({"id": invited})))
        .await;
    assert_eq!(res.status, 409);
    assert_eq!(res.json(), json!({"error": "User already has a password"}));

    // Logged, without the token anywhere in the entry.
    let entries = logged(&app.db, "auth.users.resend_invite").await;
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].0, Some(invited.to_string()));
    assert_eq!(entries[0].1, Some(acme.tenant_id));
    let mut conn = app.db.conn().await.unwrap();
    type Snapshots = (Option<Value>, Option<Value>, Option<Value>, Option<Value>);
    let rows: Vec<Snapshots> = action_logs::table
        .filter(action_logs::command_id.eq("auth.users.resend_invite"))
        .select((
            action_logs::snapshot_before,
            action_logs::snapshot_after,
            action_logs::command_payload,
            action_logs::context_json,
        ))
        .load(&mut *conn)
        .await
        .unwrap();
    let text = format!("{rows:?}");
    assert!(!text.contains(&first) && !text.contains(&second), "{text}");
    let undo: Vec<Option<String>> = action_logs::table
        .filter(action_logs::command_id.eq("auth.users.resend_invite"))
        .select(action_logs::undo_token)
        .load(&mut *conn)
        .await
        .unwrap();
    assert!(undo.iter().all(Option::is_none), "not undoable");
}

#[actix_web::test]
async fn resend_refuses_what_it_cannot_do() {
    let app = start_with(unlimited).await;
    let acme = acme(&app.db).await;
    let globex = stoa_auth::testing::seed_tenant(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let invited = user_with_features(&app.db, &acme, "new@acme.com", &[], None, None).await;
    let foreign = user_with_features(&app.db, &globex, "new@globex.com", &[], None, None).await;

    for body in [
        json!({}),
        json!({"id": "nope"}),
        json!({"id": 5}),
        json!([]),
    ] {
        let res = app.send(post_json(RESEND, &admin, body.clone())).await;
        assert_eq!(res.status, 422, "{body}");
        assert_eq!(res.json()["error"], "Validation failed");
        // The route declares shape D (`fieldErrors`), rendered by the server's
        // access middleware (apps/server's shape test); here the issues.
        assert_eq!(res.json()["issues"][0]["path"], json!(["id"]), "{body}");
    }
    let res = app
        .send(bearer(
            TestRequest::post()
                .uri(RESEND)
                .insert_header(("content-type", "application/json"))
                .set_payload("{"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 422);

    for id in [Uuid::new_v4(), foreign] {
        let res = app.send(post_json(RESEND, &admin, json!({"id": id}))).await;
        assert_eq!(res.status, 404);
        assert_eq!(res.json(), json!({"error": "User not found"}));
    }
    let res = app
        .send(post_json(RESEND, &admin, json!({"id": acme.employee})))
        .await;
    assert_eq!(res.status, 409);
    let res = app
        .send(
            post_json(RESEND, &admin, json!({"id": invited}))
                .insert_header(("origin", "https://evil.example")),
        )
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json(), json!({"error": "Invalid request origin"}));
    let res = app
        .send(
            post_json(RESEND, &admin, json!({"id": invited}))
                .insert_header(("origin", "http://localhost:3000")),
        )
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(mails(&app).await.len(), 1, "refusals send nothing");

    let employee = token_for(&app.db, acme.employee).await;
    let res = app
        .send(post_json(RESEND, &employee, json!({"id": invited})))
        .await;
    assert_eq!(res.status, 403);

    // Without APP_URL there is no link to send.
    let unconfigured = start_with(|c| c.app_url = None).await;
    let acme = super::support::acme(&unconfigured.db).await;
    let admin = token_for(&unconfigured.db, acme.admin).await;
    let invited =
        user_with_features(&unconfigured.db, &acme, "new@acme.com", &[], None, None).await;
    let res = unconfigured
        .send(post_json(RESEND, &admin, json!({"id": invited})))
        .await;
    assert_eq!(res.status, 500);
    assert_eq!(
        res.json()["error"],
        "Invitation email origin is not configured"
    );
}

#[actix_web::test]
async fn resend_is_rate_limited_per_invited_user_not_per_administrator() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let invited = user_with_features(&app.db, &acme, "new@acme.com", &[], None, None).await;
    for remaining in ["2", "1", "0"] {
        let res = app
            .send(post_json(RESEND, &admin, json!({"id": invited})))
            .await;
        assert_eq!(res.status, 200);
        assert_eq!(res.header("x-ratelimit-limit"), Some("3"));
        assert_eq!(res.header("x-ratelimit-remaining"), Some(remaining));
    }
    let res = app
        .send(post_json(RESEND, &admin, json!({"id": invited})))
        .await;
    assert_eq!(res.status, 429);
    let retry: u64 = res.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=300).contains(&retry), "{retry}");
    assert_eq!(res.header("x-ratelimit-limit"), Some("3"));
    assert_eq!(res.header("x-ratelimit-remaining"), Some("0"));
    assert_eq!(mails(&app).await.len(), 3);

    // The same administrator working through a list is not blocked.
    for n in 0..5 {
        let other =
            user_with_features(&app.db, &acme, &format!("n{n}@acme.com"), &[], None, None).await;
        let res = app
            .send(post_json(RESEND, &admin, json!({"id": other})))
            .await;
        assert_eq!(res.status, 200, "invitee {n}: {}", res.text());
        assert_eq!(res.header("x-ratelimit-remaining"), Some("2"));
    }
    // Unknown and malformed ids: 404 and 422, with the quota headers.
    let res = app
        .send(post_json(RESEND, &admin, json!({"id": Uuid::new_v4()})))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.header("x-ratelimit-limit"), Some("3"));
    let res = app
        .send(post_json(RESEND, &admin, json!({"id": "nope"})))
        .await;
    assert_eq!(res.status, 422);
    assert_eq!(res.header("x-ratelimit-remaining"), Some("3"));
}

#[actix_web::test]
async fn hidden_super_admins_answer_404_like_unknown_users() {
    let app = start_with(unlimited).await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    // Before the fix this was 409 "User already has a password": an oracle
    // for accounts the administrator cannot see.
    let res = app
        .send(post_json(RESEND, &admin, json!({"id": acme.superadmin})))
        .await;
    assert_eq!(res.status, 404, "{}", res.text());
    assert_eq!(res.json(), json!({"error": "User not found"}));
    let unknown = app
        .send(post_json(RESEND, &admin, json!({"id": Uuid::new_v4()})))
        .await;
    assert_eq!((unknown.status, unknown.json()), (res.status, res.json()));
    // A super admin sees super admins: the ordinary answer.
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(post_json(RESEND, &root, json!({"id": acme.superadmin})))
        .await;
    assert_eq!(res.status, 409);
    // And an ordinary administrator still reaches ordinary users.
    let res = app
        .send(post_json(RESEND, &admin, json!({"id": acme.employee})))
        .await;
    assert_eq!(res.status, 409);
}

struct BrokenMailer;

impl Mailer for BrokenMailer {
    fn send<'a>(&'a self, _: Mail) -> BoxFuture<'a, Result<(), MailError>> {
        Box::pin(async { Err(MailError::Send("smtp is down".into())) })
    }
}

#[actix_web::test]
async fn a_failed_mail_is_reported_as_a_warning() {
    let app = stoa_testkit::app()
        .module_with(|db| {
            let registry = Arc::new(stoa_auth::base_registry().unwrap());
            let mut state = AuthState::new(db.clone(), AuthConfig::for_tests(), registry).unwrap();
            state.mailer = Arc::new(BrokenMailer);
            Arc::new(stoa_auth::configure(Arc::new(state)))
        })
        .start()
        .await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let invited = user_with_features(&app.db, &acme, "new@acme.com", &[], None, None).await;
    let res = app
        .send(post_json(RESEND, &admin, json!({"id": invited})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({"ok": true, "warning": "invite_email_failed"})
    );
}
