//! Issue 49, from the attacker's side: repeated sign-ups for one address
//! must not mail-bomb it. At most one sign-up e-mail per address per 10
//! minutes, decided in the database (across processes, under races); the
//! answer stays the same, and the victim's pending request is unchanged.

use std::time::{Duration, Instant};

use diesel_async::{AsyncConnection, RunQueryDsl};
use serde_json::json;

use super::support::*;

/// The victim's pending request, every column but the row's id.
async fn request_of(app_db: &stoa_core::db::Db, email: &str) -> String {
    text(
        app_db,
        &format!(
            "SELECT coalesce(json_agg(r)::text, '[]') AS v FROM (SELECT email, token_hash, \
             first_name, last_name, organization_name, password_hash, expires_at, \
             last_email_sent_at, updated_at FROM onboarding_requests WHERE email = '{email}') r"
        ),
    )
    .await
}

#[actix_web::test]
async fn repeated_sign_ups_mail_an_address_once_per_window_and_change_nothing() {
    let app = start().await;
    let victim = "victim@example.com";
    let first = submit(&app, &form(victim)).await;
    assert_eq!(first.status, 201, "{}", first.text());
    let token = token_for_email(&app.db, victim).await;
    let stored = request_of(&app.db, victim).await;

    // The attacker repeats the sign-up with its own organization and password.
    for i in 0..5 {
        let mut body = form(victim);
        body["organizationName"] = json!(format!("Attacker {i}"));
        body["password"] = json!(format!("{PASSWORD}-2"));
        body["confirmPassword"] = json!(format!("{PASSWORD}-2"));
        let res = app.send(submit_from(&body, &format!("10.9.9.{i}"))).await;
        // The same answer as the first submission.
        assert_eq!(res.status, 201, "{}", res.text());
        assert_eq!(res.json(), first.json());
    }
    assert_eq!(mails_to(&app.db, victim).await.len(), 1);
    assert_eq!(request_of(&app.db, victim).await, stored);

    // An address with an account is not bombed with notices either.
    onboard(&app, "owner@example.com").await;
    let mails = mails_to(&app.db, "owner@example.com").await.len();
    for _ in 0..3 {
        assert_eq!(submit(&app, &form("owner@example.com")).await.status, 201);
    }
    assert_eq!(mails_to(&app.db, "owner@example.com").await.len(), mails);

    // Once the window has passed, a sign-up mails again (a fresh link).
    exec(
        &app.db,
        "UPDATE onboarding_mail_sends SET sent_at = now() - interval '601 seconds'",
    )
    .await;
    assert_eq!(submit(&app, &form(victim)).await.status, 201);
    assert_eq!(mails_to(&app.db, victim).await.len(), 2);
    assert_ne!(token_for_email(&app.db, victim).await, token);
    assert_eq!(submit(&app, &form("owner@example.com")).await.status, 201);
    let owner_mails = mails_to(&app.db, "owner@example.com").await;
    assert_eq!(owner_mails.len(), mails + 1);
    assert_eq!(
        owner_mails.last().unwrap()["subject"],
        "You already have an account"
    );
}

#[actix_web::test]
async fn two_concurrent_sign_ups_for_one_address_send_one_mail() {
    let app = start().await;
    let email = "race@example.com";
    let (a, b) = futures_util::join!(
        app.send(submit_from(&form(email), "10.2.2.1")),
        app.send(submit_from(&form(email), "10.2.2.2")),
    );
    assert_eq!((a.status.as_u16(), b.status.as_u16()), (201, 201));
    assert_eq!(a.json(), b.json());
    assert_eq!(mails_to(&app.db, email).await.len(), 1);
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM onboarding_requests WHERE email = 'race@example.com'"
        )
        .await,
        1
    );
}

#[actix_web::test]
async fn a_sign_up_racing_another_process_waits_for_its_window_and_sends_nothing() {
    let app = start().await;
    let email = "held@example.com";
    // Another process's submission holds the address's window, uncommitted.
    let holder = async {
        let mut conn = app.db.conn().await.unwrap();
        (*conn)
            .transaction(async |c| {
                diesel::sql_query(
                    "INSERT INTO onboarding_mail_sends (email) VALUES ('held@example.com')",
                )
                .execute(c)
                .await?;
                tokio::time::sleep(Duration::from_millis(400)).await;
                Ok::<_, diesel::result::Error>(())
            })
            .await
            .unwrap();
    };
    let racer = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        let res = submit(&app, &form(email)).await;
        (res, started.elapsed())
    };
    let ((), (res, waited)) = futures_util::join!(holder, racer);
    assert_eq!(res.status, 201, "{}", res.text());
    // It waited for the other transaction, then found the window taken.
    assert!(waited >= Duration::from_millis(290), "{waited:?}");
    assert!(mails_to(&app.db, email).await.is_empty());
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM onboarding_requests WHERE email = 'held@example.com'"
        )
        .await,
        0
    );
}
