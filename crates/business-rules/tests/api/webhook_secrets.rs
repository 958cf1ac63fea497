//! Signed webhooks: a rule calling webhooks gets a secret of its own, shown
//! once (create, the update that adds its first webhook, rotation), never
//! in reads, logs, jobs or the action log; every webhook request is signed
//! with it (Standard Webhooks headers) and a test server on 127.0.0.1
//! verifies the signature; undo and redo never bring an old secret back;
//! rotation is scoped like every rule write.

use serde_json::{Value, json};
use stoa_core::outbound::signing::{
    DEFAULT_TOLERANCE_SECS, SignatureError, WEBHOOK_ID, WEBHOOK_SIGNATURE, WEBHOOK_TIMESTAMP,
    WebhookSigner,
};
use stoa_testkit::{Answer, AppService, FakeUpstream, Recorded, TestApp};
use uuid::Uuid;

use super::support::*;

fn secret_path(id: impl std::fmt::Display) -> String {
    format!("{RULES}/{id}/webhook-secret")
}

fn hook_rule(url: &str) -> Value {
    json!({
        "ruleId": "hook", "ruleName": "Hook", "ruleType": "ACTION", "entityType": "crm.deal",
        "successActions": [{"type": "CALL_WEBHOOK", "config": {
            "url": url, "method": "POST",
            // A rule cannot forge the signature: the signer's headers win.
            "headers": {"x-rule": "{{ruleId}}", "webhook-signature": "v1,forged"},
            "body": {"title": "{{data.title}}"},
        }}],
    })
}

/// Creates `body` (201); answers the rule's id and its shown secret.
async fn create<S: AppService>(app: &TestApp<S>, token: &str, body: Value) -> (Uuid, Value) {
    let res = app.send(post_json(RULES, token, body)).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let json = res.json();
    (id_of(&json), json["webhookSecret"].clone())
}

/// Runs the rules of `crm.deal` (not a dry run) and the queued webhook job;
/// answers what the upstream received last.
async fn call_webhook<S: AppService>(
    app: &TestApp<S>,
    token: &str,
    upstream: &FakeUpstream,
) -> Recorded {
    let res = app
        .send(post_json(
            EXECUTE,
            token,
            json!({"entityType": "crm.deal", "data": {"title": "Big deal"}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let before = upstream.hits();
    assert!(workers(&app.db).run_one().await.unwrap());
    assert_eq!(upstream.hits(), before + 1);
    upstream.requests().pop().unwrap()
}

fn verify(secret: &str, request: &Recorded) -> Result<(), SignatureError> {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    WebhookSigner::new(secret).verify(
        request.header(WEBHOOK_ID).unwrap(),
        request.header(WEBHOOK_TIMESTAMP).unwrap(),
        request.header(WEBHOOK_SIGNATURE).unwrap(),
        &request.body,
        now,
        DEFAULT_TOLERANCE_SECS,
    )
}

/// Rows of `table` whose text holds a secret or a ciphertext.
async fn leaks(app_db: &stoa_core::db::Db, table: &str, secret: &str) -> i64 {
    count(
        app_db,
        &format!(
            "SELECT count(*) AS n FROM {table} t WHERE t::text LIKE '%{secret}%' \
             OR t::text LIKE '%enc:v2:%' OR t::text LIKE '%whsec_%'"
        ),
    )
    .await
}

#[actix_web::test]
async fn a_webhook_is_signed_with_the_secret_shown_once_at_create() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let upstream = FakeUpstream::on("127.0.0.1", |_| Answer::text(200, "ok"));
    let (id, secret) = create(&app, &admin, hook_rule(&upstream.url("/deals"))).await;
    let secret = secret.as_str().expect("a secret at create").to_string();
    assert!(secret.starts_with("whsec_"), "{secret}");
    // Stored encrypted, bound to the rule.
    assert_eq!(
        count(
            &app.db,
            &format!(
                "SELECT count(*) AS n FROM business_rules WHERE id = '{id}' \
                 AND webhook_secret LIKE 'enc:v2:%'"
            ),
        )
        .await,
        1
    );

    let request = call_webhook(&app, &admin, &upstream).await;
    assert_eq!(verify(&secret, &request), Ok(()), "{:?}", request.headers);
    assert_eq!(request.json()["title"], "Big deal");
    assert_eq!(request.header("x-rule"), Some("hook"));
    assert_eq!(
        request
            .headers
            .iter()
            .filter(|(n, _)| n == WEBHOOK_SIGNATURE)
            .count(),
        1,
        "the rule's own webhook-signature header is not sent"
    );
    assert!(request.header(WEBHOOK_ID).unwrap().starts_with("msg_"));
    let other = WebhookSigner::generate_secret().unwrap();
    assert_eq!(verify(&other, &request), Err(SignatureError::Mismatch));

    // Never shown again: not by the detail, the list, the execution log, the
    // job queue or the action log.
    for path in [format!("{RULES}/{id}"), RULES.to_string(), LOGS.to_string()] {
        let text = app.send(get(&path, &admin)).await.text();
        assert!(!text.contains(&secret), "{path}: {text}");
        assert!(!text.contains("webhookSecret"), "{path}: {text}");
        assert!(!text.contains("enc:v2:"), "{path}: {text}");
    }
    for table in [
        "business_rule_logs",
        "job_queue",
        "action_logs",
        "event_outbox",
    ] {
        assert_eq!(leaks(&app.db, table, &secret).await, 0, "{table}");
    }
}

#[actix_web::test]
async fn only_the_first_webhook_action_of_a_rule_makes_a_secret() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let upstream = FakeUpstream::on("127.0.0.1", |_| Answer::text(200, "ok"));
    let (id, secret) = create(
        &app,
        &admin,
        json!({"ruleId": "plain", "ruleName": "Plain", "ruleType": "ACTION", "entityType": "crm.deal"}),
    )
    .await;
    assert!(secret.is_null(), "no webhook, no secret");
    let mut change = hook_rule(&upstream.url("/h"));
    change["id"] = json!(id);
    change["ruleId"] = json!("plain");
    let res = app.send(put_json(RULES, &admin, change.clone())).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let secret = res.json()["webhookSecret"]
        .as_str()
        .expect("the update adding the first webhook shows its secret")
        .to_string();
    let res = app.send(put_json(RULES, &admin, change)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!({"ok": true}), "shown once");
    let request = call_webhook(&app, &admin, &upstream).await;
    assert_eq!(verify(&secret, &request), Ok(()));
}

#[actix_web::test]
async fn rotation_replaces_the_secret_and_undo_or_redo_never_brings_one_back() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let upstream = FakeUpstream::on("127.0.0.1", |_| Answer::text(200, "ok"));
    let (id, first) = create(&app, &admin, hook_rule(&upstream.url("/h"))).await;
    let first = first.as_str().unwrap().to_string();
    let res = app
        .send(put_json(
            RULES,
            &admin,
            json!({"id": id, "ruleName": "Renamed"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let rename = res.operation().unwrap();

    let res = app
        .send(post_json(&secret_path(id), &admin, json!({})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(
        res.operation().is_none(),
        "a rotation is not undoable (no undo token to offer)"
    );
    let second = res.json()["webhookSecret"].as_str().unwrap().to_string();
    assert!(second.starts_with("whsec_") && second != first);

    // Undo the rename (from before the rotation), then redo it: the rule's
    // fields move, the secret stays the rotated one.
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/undo",
            &admin,
            json!({"undoToken": rename.undo_token.unwrap()}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        app.send(get(&format!("{RULES}/{id}"), &admin)).await.json()["ruleName"],
        "Hook"
    );
    let request = call_webhook(&app, &admin, &upstream).await;
    assert_eq!(verify(&second, &request), Ok(()));
    assert_eq!(verify(&first, &request), Err(SignatureError::Mismatch));
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/redo",
            &admin,
            json!({"logId": rename.id}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        app.send(get(&format!("{RULES}/{id}"), &admin)).await.json()["ruleName"],
        "Renamed"
    );
    let request = call_webhook(&app, &admin, &upstream).await;
    assert_eq!(verify(&second, &request), Ok(()));

    // The rotation is in the action log, without a snapshot or undo data.
    let rotations = count(
        &app.db,
        &format!(
            "SELECT count(*) AS n FROM action_logs WHERE resource_id = '{id}' \
             AND action_label = 'Rotate business rule webhook secret' \
             AND command_id = 'business_rules.rules.rotate_webhook_secret' \
             AND snapshot_after IS NULL AND undo_token IS NULL"
        ),
    )
    .await;
    assert_eq!(rotations, 1);
    for table in ["action_logs", "job_queue", "business_rule_logs"] {
        assert_eq!(leaks(&app.db, table, &first).await, 0, "{table}");
        assert_eq!(leaks(&app.db, table, &second).await, 0, "{table}");
    }
}

#[actix_web::test]
async fn only_a_rules_manager_of_the_rules_tenant_rotates() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let other = token_for(&app.db, globex.admin).await;
    let upstream = FakeUpstream::on("127.0.0.1", |_| Answer::text(200, "ok"));
    let (id, secret) = create(&app, &admin, hook_rule(&upstream.url("/h"))).await;
    let secret = secret.as_str().unwrap().to_string();

    let res = app
        .send(post_json(&secret_path(id), &other, json!({})))
        .await;
    assert_eq!(res.status, 404, "another tenant's rule: {}", res.text());
    assert!(!res.text().contains("whsec_"));

    let viewer = user_with_features(
        &app.db,
        &acme,
        "viewer@acme.com",
        &["business_rules.view"],
        None,
        None,
    )
    .await;
    let viewer = token_for(&app.db, viewer).await;
    let res = app
        .send(post_json(&secret_path(id), &viewer, json!({})))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());

    let anonymous = app
        .send(actix_web::test::TestRequest::post().uri(&secret_path(id)))
        .await;
    assert_eq!(anonymous.status, 401);

    let res = app
        .send(post_json(&secret_path("nope"), &admin, json!({})))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["error"], "Invalid rule id");
    let res = app
        .send(post_json(&secret_path(Uuid::new_v4()), &admin, json!({})))
        .await;
    assert_eq!(res.status, 404);
    let res = app.send(delete(&format!("{RULES}?id={id}"), &admin)).await;
    assert_eq!(res.status, 200);
    let res = app
        .send(post_json(&secret_path(id), &admin, json!({})))
        .await;
    assert_eq!(res.status, 404, "a deleted rule");

    // Nothing of that changed the secret.
    let mut conn = app.db.conn().await.unwrap();
    let keys = stoa_auth::testing::services(&app.db, registry()).keys;
    let signer = stoa_business_rules::secrets::signer(&mut conn, &keys, acme.tenant_id, id)
        .await
        .unwrap()
        .unwrap();
    let signed = signer.sign("m", 1, b"x");
    assert_eq!(signed, WebhookSigner::new(&secret).sign("m", 1, b"x"));
}
