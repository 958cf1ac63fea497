//! `GET /onboarding/onboarding/verify`: provisioning in one transaction,
//! JSON or a page, 200 for every outcome (used / expired / unknown links say
//! so with `ok:false` and a `code`, changing nothing), no session opened,
//! and two concurrent openings of one link provisioning once.

use actix_web::test::TestRequest;
use serde_json::json;

use super::support::*;

async fn tenants(db: &stoa_core::db::Db) -> i64 {
    count(db, "SELECT count(*) AS n FROM tenants").await
}

#[actix_web::test]
async fn verifying_provisions_the_workspace_and_the_admin() {
    let app = start().await;
    assert_eq!(submit(&app, &form("ada@example.com")).await.status, 201);
    let token = token_for_email(&app.db, "ada@example.com").await;
    let res = verify(&app, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(res.cookie("om_login_tenant").is_some());
    assert_eq!(res.header("cache-control"), Some("no-store"));
    no_session_opened(&res);
    let body = res.json();
    assert_eq!(body["ok"], true);
    assert_eq!(body["email"], "ada@example.com");
    let tenant = body["tenantId"].as_str().unwrap().to_string();
    let org = body["organizationId"].as_str().unwrap().to_string();
    let user = body["userId"].as_str().unwrap().to_string();
    assert_eq!(
        body["statusUrl"],
        format!("/api/onboarding/onboarding/status?tenantId={tenant}")
    );
    assert_eq!(
        body["loginUrl"],
        format!("{PUBLIC_URL}/login?tenant={tenant}")
    );
    assert!(body["progressJobId"].is_string());

    // The tenant and its root organization are named after the form.
    assert_eq!(
        text(
            &app.db,
            &format!("SELECT name AS v FROM tenants WHERE id = '{tenant}'")
        )
        .await,
        "Analytical Engines"
    );
    assert_eq!(
        text(&app.db, &format!("SELECT name AS v FROM organizations WHERE id = '{org}' AND tenant_id = '{tenant}' AND parent_id IS NULL")).await,
        "Analytical Engines"
    );
    // The user, with the password hash from the submission and role admin.
    assert_eq!(
        text(
            &app.db,
            &format!("SELECT email AS v FROM users WHERE id = '{user}' AND tenant_id = '{tenant}'")
        )
        .await,
        "ada@example.com"
    );
    assert_eq!(
        text(&app.db, &format!("SELECT string_agg(r.name, ',') AS v FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = '{user}'")).await,
        "admin"
    );
    // Every module's seeder ran (the default roles, partitions, ...).
    assert_eq!(
        count(
            &app.db,
            &format!("SELECT count(*) AS n FROM roles WHERE tenant_id = '{tenant}'")
        )
        .await,
        3
    );
    // The marketing consent, recorded for the new user.
    assert_eq!(
        count(&app.db, &format!("SELECT count(*) AS n FROM user_consents WHERE user_id = '{user}' AND consent_type = 'marketing_email' AND is_granted AND source = 'onboarding' AND ip_address = '10.1.1.1'")).await,
        1
    );
    // The request: completed, linked, without its password hash.
    assert_eq!(
        count(&app.db, &format!("SELECT count(*) AS n FROM onboarding_requests WHERE status = 'completed' AND tenant_id = '{tenant}' AND user_id = '{user}' AND password_hash IS NULL AND completed_at IS NOT NULL")).await,
        1
    );
    // The demo-data job waits in the queue, scoped to the new tenant and admin.
    assert_eq!(
        count(&app.db, &format!("SELECT count(*) AS n FROM job_queue WHERE kind = 'onboarding.prepare_workspace' AND tenant_id = '{tenant}' AND created_by_user_id = '{user}'")).await,
        1
    );
    let events = stoa_testkit::outbox_events_named(&app.db, "onboarding.request.completed").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["tenantId"], json!(tenant));
    assert_eq!(events[0]["commandId"], "onboarding.requests.verify");
    // Logged in the new tenant's action log, not undoable.
    assert_eq!(
        count(
            &app.db,
            &format!(
                "SELECT count(*) AS n FROM action_logs WHERE command_id = 'onboarding.requests.verify' \
                 AND tenant_id = '{tenant}' AND resource_kind = 'onboarding.request'"
            )
        )
        .await,
        1
    );
}

#[actix_web::test]
async fn no_marketing_consent_is_recorded_unless_given() {
    let app = start().await;
    let mut body = form("bob@example.com");
    body["marketingConsent"] = json!(false);
    assert_eq!(submit(&app, &body).await.status, 201);
    let token = token_for_email(&app.db, "bob@example.com").await;
    assert_eq!(verify(&app, &token).await.status, 200);
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM user_consents").await,
        0
    );
}

#[actix_web::test]
async fn browsers_get_a_page_with_a_link_onward() {
    let app = start().await;
    assert_eq!(submit(&app, &form("ada@example.com")).await.status, 201);
    let token = token_for_email(&app.db, "ada@example.com").await;
    let browser = |token: &str| {
        TestRequest::get()
            .uri(&format!("{VERIFY}?token={token}"))
            .insert_header((
                "accept",
                "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            ))
    };
    let res = app.send(browser(&token)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(res.header("content-type").unwrap().starts_with("text/html"));
    let page = res.text();
    assert!(page.contains("Your workspace is ready"), "{page}");
    let tenant = text(
        &app.db,
        "SELECT tenant_id::text AS v FROM onboarding_requests",
    )
    .await;
    assert!(
        page.contains(&format!("href=\"{PUBLIC_URL}/login?tenant={tenant}\"")),
        "{page}"
    );
    // Every outcome is a 200 page saying what happened.
    let res = app.send(browser(&token)).await;
    assert_eq!(res.status, 200);
    no_session_opened(&res);
    assert!(
        res.header("content-type").unwrap().starts_with("text/html"),
        "{:?} {}",
        res.headers,
        res.text()
    );
    assert!(res.text().contains("already been used"));
    let res = app.send(browser(&"0".repeat(64))).await;
    assert_eq!(res.status, 200);
    assert!(res.header("content-type").unwrap().starts_with("text/html"));
    assert!(res.text().contains("invalid"));
}

#[actix_web::test]
async fn used_expired_and_unknown_links_change_nothing() {
    let app = start().await;
    assert_eq!(submit(&app, &form("ada@example.com")).await.status, 201);
    let token = token_for_email(&app.db, "ada@example.com").await;

    for (token, code) in [
        ("", "invalid_token"),
        ("not-a-token", "invalid_token"),
        (&"f".repeat(64)[..], "invalid_token"),
    ] {
        let res = verify(&app, token).await;
        assert_eq!(res.status, 200, "{token}: {}", res.text());
        assert_eq!(res.json()["ok"], false);
        assert_eq!(res.json()["code"], code);
        assert!(
            res.json()["error"]
                .as_str()
                .is_some_and(|e| e.contains("invalid"))
        );
        no_session_opened(&res);
    }
    // No token at all, or a query that does not parse: the same answer.
    for uri in [VERIFY.to_string(), format!("{VERIFY}?token=%FF%FE")] {
        let res = app
            .send(
                TestRequest::get()
                    .uri(&uri)
                    .insert_header(("accept", "application/json")),
            )
            .await;
        assert_eq!(res.status, 200, "{uri}: {}", res.text());
        assert_eq!(res.json()["code"], "invalid_token", "{uri}");
    }

    // Expired: said so, nothing provisioned, the request still pending.
    exec(
        &app.db,
        "UPDATE onboarding_requests SET expires_at = now() - interval '1 minute'",
    )
    .await;
    let before = tenants(&app.db).await;
    let res = verify(&app, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["ok"], false);
    assert_eq!(res.json()["code"], "token_expired");
    assert!(res.json()["error"].as_str().unwrap().contains("expired"));
    assert_eq!(tenants(&app.db).await, before);
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM onboarding_requests WHERE status = 'pending'"
        )
        .await,
        1
    );

    // Valid again: it works once; the second use says so and changes nothing.
    exec(
        &app.db,
        "UPDATE onboarding_requests SET expires_at = now() + interval '1 hour'",
    )
    .await;
    assert_eq!(verify(&app, &token).await.status, 200);
    let after = tenants(&app.db).await;
    assert_eq!(after, before + 1);
    let res = verify(&app, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["ok"], false);
    assert_eq!(res.json()["code"], "token_used");
    assert!(
        res.json()["error"]
            .as_str()
            .unwrap()
            .contains("already been used")
    );
    assert!(res.cookie("om_login_tenant").is_none());
    assert_eq!(tenants(&app.db).await, after);
}

#[actix_web::test]
async fn an_email_registered_meanwhile_is_refused_at_verification() {
    let app = start().await;
    assert_eq!(submit(&app, &form("ada@example.com")).await.status, 201);
    let token = token_for_email(&app.db, "ada@example.com").await;
    // Someone signs the address up elsewhere before the link is opened.
    let other = onboard_other(&app).await;
    exec(
        &app.db,
        &format!("UPDATE users SET email = 'ada@example.com' WHERE id = '{other}'"),
    )
    .await;
    let before = tenants(&app.db).await;
    let res = verify(&app, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["ok"], false);
    assert_eq!(res.json()["code"], "account_exists");
    assert_eq!(tenants(&app.db).await, before);
}

async fn onboard_other<S: stoa_testkit::AppService>(app: &stoa_testkit::TestApp<S>) -> String {
    onboard(app, "someone@example.com").await["userId"]
        .as_str()
        .unwrap()
        .to_string()
}

#[actix_web::test]
async fn two_concurrent_verifications_provision_once() {
    let app = start().await;
    assert_eq!(submit(&app, &form("ada@example.com")).await.status, 201);
    let token = token_for_email(&app.db, "ada@example.com").await;
    let before = tenants(&app.db).await;
    let (a, b) = futures_util::future::join(verify(&app, &token), verify(&app, &token)).await;
    assert_eq!((a.status.as_u16(), b.status.as_u16()), (200, 200));
    let mut oks = [a.json()["ok"] == true, b.json()["ok"] == true];
    oks.sort();
    assert_eq!(oks, [false, true], "{} / {}", a.text(), b.text());
    let loser = if a.json()["ok"] == false { &a } else { &b };
    assert_eq!(loser.json()["code"], "token_used");
    assert_eq!(tenants(&app.db).await, before + 1);
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM users WHERE email = 'ada@example.com'"
        )
        .await,
        1
    );
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM job_queue WHERE kind = 'onboarding.prepare_workspace'"
        )
        .await,
        1
    );
}

/// The answer signs nobody in: no credential cookie is set (the session
/// cookies a browser holds are expired), and no session row exists for
/// the new admin.
fn no_session_opened(res: &stoa_testkit::TestResponse) {
    for name in ["auth_token", "session_token"] {
        assert_eq!(
            res.cookie(name).as_deref(),
            Some(""),
            "{name}: {:?}",
            res.cookies()
        );
        assert!(
            res.cookies()
                .iter()
                .any(|c| c.starts_with(&format!("{name}=;")) && c.contains("Max-Age=0")),
            "{name} not expired: {:?}",
            res.cookies()
        );
    }
}

#[actix_web::test]
async fn verifying_opens_no_session() {
    let app = start().await;
    assert_eq!(submit(&app, &form("ada@example.com")).await.status, 201);
    let token = token_for_email(&app.db, "ada@example.com").await;
    let res = verify(&app, &token).await;
    assert_eq!(res.status, 200, "{}", res.text());
    no_session_opened(&res);
    let user = res.json()["userId"].as_str().unwrap().to_string();
    assert!(res.json().get("token").is_none());
    assert_eq!(
        count(
            &app.db,
            &format!("SELECT count(*) AS n FROM sessions WHERE user_id = '{user}'")
        )
        .await,
        0
    );
}
