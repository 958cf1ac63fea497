//! Actions with real effects: a webhook reaches a test server on 127.0.0.1
//! from the job queue; a private address is refused at save and again at
//! call; domain events trigger rules after commit (logs, emitted events),
//! and a rule's own event does not re-trigger rules.

use serde_json::json;
use stoa_testkit::{Answer, FakeUpstream};

use super::support::*;

#[actix_web::test]
async fn a_deal_event_triggers_a_webhook_that_reaches_the_test_server() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let upstream = FakeUpstream::on("127.0.0.1", |_| Answer::text(200, "ok"));
    rule(&app, &admin, json!({
        "ruleId": "notify-hook", "entityType": "customers.deal", "eventType": "created",
        "conditionExpression": {"field": "title", "operator": "STARTS_WITH", "value": "Hook"},
        "successActions": [
            {"type": "CALL_WEBHOOK", "config": {"url": upstream.url("/deals"), "method": "POST",
                "headers": {"x-rule": "{{ruleId}}"}, "body": {"title": "{{data.title}}", "secret": "{{data.nothing}}"}}},
            {"type": "EMIT_EVENT", "config": {"eventName": "acme.deal.hooked", "payload": {"loop": true}}},
        ],
    }))
    .await;
    // A rule may not emit another module's events: a name in a registered
    // module's namespace is refused at save.
    let res = app
        .send(post_json(RULES, &admin, json!({"ruleId": "on-update", "ruleName": "On update",
            "ruleType": "ACTION", "entityType": "customers.deal", "eventType": "updated",
            "successActions": [{"type": "EMIT_EVENT", "config": {"eventName": "customers.deal.updated"}}]})))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert!(
        res.text().contains("successActions.0.config.eventName")
            && res.text().contains("namespace of module customers"),
        "{}",
        res.text()
    );
    deal(&app, &admin, json!({"title": "Hook me"})).await;
    deal(&app, &admin, json!({"title": "Quiet"})).await;
    dispatch(&app.db).await;
    let logs = app.send(get(LOGS, &admin)).await.json();
    assert_eq!(logs["total"], 2, "{logs}");
    let results: Vec<_> = logs["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["executionResult"].clone())
        .collect();
    assert!(
        results.contains(&json!("SUCCESS")) && results.contains(&json!("FAILURE")),
        "{results:?}"
    );
    // The emitted event ran no rule: two logs (the two created deals), one event.
    assert_eq!(
        stoa_testkit::outbox_events_named(&app.db, "acme.deal.hooked")
            .await
            .len(),
        1
    );

    assert_eq!(upstream.hits(), 0, "the call waits for the job queue");
    assert!(workers(&app.db).run_one().await.unwrap());
    assert_eq!(upstream.hits(), 1);
    let request = &upstream.requests()[0];
    assert_eq!(request.json()["title"], "Hook me");
    assert_eq!(
        request.json()["secret"],
        "{{data.nothing}}",
        "unknown placeholders stay"
    );
    assert_eq!(request.header("x-rule"), Some("notify-hook"));
}

#[actix_web::test]
async fn a_failing_webhook_is_retried_and_a_private_address_is_refused_at_call_time() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let upstream = FakeUpstream::scripted([Answer::status(503), Answer::text(200, "ok")]);
    rule(
        &app,
        &admin,
        json!({"ruleId": "hook", "entityType": "crm.deal",
        "successActions": [{"type": "CALL_WEBHOOK", "config": {"url": upstream.url("/h")}}]}),
    )
    .await;
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            json!({"entityType": "crm.deal"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(workers(&app.db).run_one().await.unwrap());
    assert_eq!(upstream.hits(), 1);
    let attempts = count(
        &app.db,
        "SELECT attempts::bigint AS n FROM job_queue WHERE kind = 'business_rules.webhook'",
    )
    .await;
    assert_eq!(
        attempts, 1,
        "the first attempt failed and waits for its retry"
    );

    // A job whose URL is private (stored before the guard changed, or
    // edited by hand) is refused at call time and not retried.
    let mut conn = app.db.conn().await.unwrap();
    stoa_jobs::enqueue(
        &mut conn,
        "business_rules.webhook",
        &json!({"url": "http://10.0.0.9/x", "method": "POST"}),
        None,
        5,
    )
    .await
    .unwrap();
    drop(conn);
    let dead_before = count(
        &app.db,
        "SELECT count(*) AS n FROM job_queue WHERE status = 'dead'",
    )
    .await;
    let workers = workers(&app.db);
    for _ in 0..3 {
        workers.run_one().await.unwrap();
    }
    let dead = count(&app.db, "SELECT count(*) AS n FROM job_queue WHERE status = 'dead' AND payload->>'url' = 'http://10.0.0.9/x'").await;
    assert_eq!(dead, 1, "refused for good (dead before: {dead_before})");
}
