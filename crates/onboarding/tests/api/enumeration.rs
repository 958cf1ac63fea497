//! No account enumeration: an e-mail that already has an account gets the
//! same status and body as a new one, in about the same time; only the
//! owner of the address learns, by e-mail, that the account exists.

use std::time::{Duration, Instant};

use super::support::*;

/// Lets the addresses mailed so far be mailed again.
async fn end_mail_windows(db: &stoa_core::db::Db) {
    exec(
        db,
        "UPDATE onboarding_mail_sends SET sent_at = now() - interval '601 seconds'",
    )
    .await;
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[actix_web::test]
async fn an_email_with_an_account_gets_the_same_answer() {
    let app = start().await;
    onboard(&app, "taken@example.com").await;
    end_mail_windows(&app.db).await;
    let requests_before = count(&app.db, "SELECT count(*) AS n FROM onboarding_requests").await;

    let taken = submit(&app, &form("taken@example.com")).await;
    let fresh = submit(&app, &form("fresh@example.com")).await;
    assert_eq!(taken.status, 201, "{}", taken.text());
    assert_eq!(fresh.status, taken.status);
    let (mut a, mut b) = (taken.json(), fresh.json());
    assert_eq!(a["email"], "taken@example.com");
    a["email"] = serde_json::Value::Null;
    b["email"] = serde_json::Value::Null;
    assert_eq!(a, b);
    let names = |res: &stoa_testkit::TestResponse| {
        let mut names: Vec<String> = res.headers.keys().map(|k| k.to_string()).collect();
        names.sort();
        names
    };
    assert_eq!(names(&taken), names(&fresh));

    // No request for the taken address; its owner is told instead.
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM onboarding_requests").await,
        requests_before + 1
    );
    let mails = mails_to(&app.db, "taken@example.com").await;
    assert_eq!(
        mails.last().unwrap()["subject"],
        "You already have an account"
    );
    assert!(
        !mails.last().unwrap()["body"]
            .as_str()
            .unwrap()
            .contains("token=")
    );
}

#[actix_web::test]
async fn an_email_with_an_account_answers_in_the_same_time() {
    let app = start().await;
    onboard(&app, "taken@example.com").await;
    end_mail_windows(&app.db).await;
    // Warm up both paths once (the taken address's repeats then fall inside
    // its mail window: the answer's time must not tell that apart either).
    submit(&app, &form("taken@example.com")).await;
    submit(&app, &form("warm@example.com")).await;
    let (mut taken, mut fresh) = (Vec::new(), Vec::new());
    for i in 0..5 {
        let started = Instant::now();
        let res = submit(&app, &form("taken@example.com")).await;
        taken.push(started.elapsed());
        assert_eq!(res.status, 201);
        let started = Instant::now();
        let res = submit(&app, &form(&format!("fresh{i}@example.com"))).await;
        fresh.push(started.elapsed());
        assert_eq!(res.status, 201);
    }
    let (taken, fresh) = (median(taken), median(fresh));
    // Both at least the floor every accepted submission waits for.
    assert!(
        taken >= stoa_onboarding::routes::submit::MIN_ANSWER_TIME,
        "{taken:?}"
    );
    assert!(
        fresh >= stoa_onboarding::routes::submit::MIN_ANSWER_TIME,
        "{fresh:?}"
    );
    let gap = taken.abs_diff(fresh);
    let tolerance = Duration::from_millis(60).max(fresh.max(taken) / 5);
    assert!(
        gap <= tolerance,
        "taken {taken:?} vs fresh {fresh:?}: {gap:?} apart (tolerance {tolerance:?})"
    );
}
