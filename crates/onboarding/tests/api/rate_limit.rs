//! The submission limits: per client address (counted before anything
//! else, invalid forms included) and per e-mail (alike for addresses with
//! and without an account), answered 429 with the standard headers.

use stoa_onboarding::OnboardingConfig;

use super::support::*;

fn limited(per_client: &str, per_email: &str) -> OnboardingConfig {
    OnboardingConfig {
        submit_per_client: per_client.parse().unwrap(),
        submit_per_email: per_email.parse().unwrap(),
        ..config()
    }
}

#[actix_web::test]
async fn each_client_address_is_limited() {
    let app = start_with(limited("3/60", "100/600")).await;
    let res = app
        .send(submit_from(&form("a1@example.com"), "10.0.0.1"))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(res.header("x-ratelimit-limit"), Some("3"));
    assert_eq!(res.header("x-ratelimit-remaining"), Some("2"));
    // An invalid form counts too (and carries the headers).
    let res = app
        .send(submit_from(&serde_json::json!({}), "10.0.0.1"))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.header("x-ratelimit-remaining"), Some("1"));
    let res = app
        .send(submit_from(&form("a2@example.com"), "10.0.0.1"))
        .await;
    assert_eq!(res.status, 201);
    assert_eq!(res.header("x-ratelimit-remaining"), Some("0"));

    let res = app
        .send(submit_from(&form("a3@example.com"), "10.0.0.1"))
        .await;
    assert_eq!(res.status, 429, "{}", res.text());
    assert_eq!(res.json()["ok"], false);
    assert!(res.json()["error"].is_string());
    let retry: u64 = res.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry));
    let reset: u64 = res.header("x-ratelimit-reset").unwrap().parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(reset > now && reset <= now + 61, "{reset} vs {now}");
    assert_eq!(res.header("x-ratelimit-limit"), Some("3"));
    assert_eq!(res.header("x-ratelimit-remaining"), Some("0"));
    assert!(mails_to(&app.db, "a3@example.com").await.is_empty());

    // Another address is not affected.
    let res = app
        .send(submit_from(&form("a3@example.com"), "10.0.0.2"))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
}

#[actix_web::test]
async fn each_email_is_limited_alike_with_or_without_an_account() {
    let app = start_with(limited("100/60", "2/600")).await;
    // admin@acme.com has an account.
    stoa_auth::testing::seed_tenant(&app.db, "Acme", "acme.com").await;
    for email in ["admin@acme.com", "pending@example.com"] {
        for ip in ["10.0.1.1", "10.0.1.2"] {
            let res = app.send(submit_from(&form(email), ip)).await;
            assert_eq!(res.status, 201, "{email}: {}", res.text());
        }
        let res = app.send(submit_from(&form(email), "10.0.1.3")).await;
        assert_eq!(res.status, 429, "{email}: {}", res.text());
        assert!(res.header("retry-after").is_some());
        assert!(res.header("x-ratelimit-reset").is_some());
        assert_eq!(res.header("x-ratelimit-limit"), Some("2"));
    }
    // One link: the second accepted submission fell inside the address's
    // mail window (`mail_window.rs`), the refused repeat sent nothing.
    assert_eq!(mails_to(&app.db, "pending@example.com").await.len(), 1);
}
