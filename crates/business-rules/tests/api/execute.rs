//! The execute endpoints, the execution log (written, redacted, scoped) and
//! dry runs that leave no trace.

use serde_json::{Value, json};

use super::support::*;

async fn traces(app_db: &stoa_core::db::Db) -> (i64, i64, i64) {
    (
        count(app_db, "SELECT count(*) AS n FROM business_rule_logs").await,
        count(
            app_db,
            "SELECT count(*) AS n FROM event_outbox WHERE name NOT LIKE 'business_rules.rule.%'",
        )
        .await,
        count(app_db, "SELECT count(*) AS n FROM job_queue").await,
    )
}

fn actions() -> Value {
    json!([
        {"type": "CALL_WEBHOOK", "config": {"url": "http://127.0.0.1:9/hook", "body": {"t": "{{data.title}}"}}},
        {"type": "EMIT_EVENT", "config": {"eventName": "crm.deal.flagged", "payload": {"title": "{{data.title}}"}}},
        {"type": "NOTIFY", "config": {"recipients": ["boss@acme.com"], "message": "Deal {{data.title}}"}},
        {"type": "LOG", "config": {"message": "seen {{data.title}}"}},
    ])
}

#[actix_web::test]
async fn execute_runs_rules_in_priority_order_and_logs_them_redacted() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    rule(
        &app,
        &admin,
        json!({"ruleId": "low", "priority": 1, "entityType": "crm.deal", "eventType": "updated",
        "conditionExpression": {"field": "amount", "operator": ">", "value": 100},
        "successActions": [{"type": "LOG", "config": {"message": "big {{data.title}}"}}]}),
    )
    .await;
    rule(&app, &admin, json!({"ruleId": "high", "ruleType": "GUARD", "priority": 900, "entityType": "crm.deal", "eventType": "updated",
        "conditionExpression": {"field": "amount", "operator": "<", "value": 50},
        "failureActions": [{"type": "BLOCK_TRANSITION", "config": {"message": "too big"}}]})).await;
    rule(
        &app,
        &admin,
        json!({"ruleId": "other-event", "entityType": "crm.deal", "eventType": "created"}),
    )
    .await;
    rule(&app, &admin, json!({"ruleId": "disabled", "entityType": "crm.deal", "eventType": "updated", "enabled": false})).await;
    rule(&app, &admin, json!({"ruleId": "expired", "entityType": "crm.deal", "eventType": "updated", "effectiveFrom": "2020-01-01", "effectiveTo": "2021-01-01"})).await;

    let res = app
        .send(post_json(EXECUTE, &admin, json!({
            "entityType": "crm.deal", "eventType": "updated", "entityId": "d-1",
            "data": {"title": "Big one", "amount": 500, "password": "hunter2", "nested": {"apiToken": "t"}},
        })))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(
        body["allowed"], false,
        "the GUARD rule's condition is false"
    );
    let ran: Vec<_> = body["executedRules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ruleId"].clone())
        .collect();
    assert_eq!(ran, [json!("high"), json!("low")]);
    assert_eq!(body["executedRules"][0]["conditionResult"], false);
    assert_eq!(
        body["executedRules"][0]["actionsExecuted"]["results"][0]["result"]["message"],
        "too big"
    );
    assert_eq!(
        body["executedRules"][1]["actionsExecuted"]["results"][0]["result"]["message"],
        "big Big one"
    );
    assert_eq!(body["logIds"].as_array().unwrap().len(), 2);

    // The log: one row per rule, secrets redacted, results as the run saw them.
    let logs = app
        .send(get(&format!("{LOGS}?sortField=id&sortDir=asc"), &admin))
        .await;
    assert_eq!(logs.status, 200, "{}", logs.text());
    let logs = logs.json();
    assert_eq!(logs["total"], 2);
    let first = &logs["items"][0];
    assert_eq!(first["ruleName"], "Rule one");
    assert_eq!(first["executionResult"], "FAILURE");
    assert_eq!(first["entityId"], "d-1");
    assert_eq!(first["inputContext"]["data"]["password"], "[REDACTED]");
    assert_eq!(
        first["inputContext"]["data"]["nested"]["apiToken"],
        "[REDACTED]"
    );
    assert_eq!(first["inputContext"]["data"]["title"], "Big one");
    assert_eq!(logs["items"][1]["executionResult"], "SUCCESS");
    let stored = count(
        &app.db,
        "SELECT count(*) AS n FROM business_rule_logs WHERE input_context::text LIKE '%hunter2%'",
    )
    .await;
    assert_eq!(stored, 0, "the secret is not stored");

    let id = first["id"].as_str().unwrap();
    let detail = app.send(get(&format!("{LOGS}/{id}"), &admin)).await;
    assert_eq!(detail.status, 200, "{}", detail.text());
    assert_eq!(detail.json()["rule"]["ruleId"], "high");
    assert_eq!(
        app.send(get(&format!("{LOGS}/abc"), &admin)).await.json()["error"],
        "Invalid log id"
    );
    assert_eq!(
        app.send(get(&format!("{LOGS}/999999"), &admin))
            .await
            .status,
        404
    );
    let filtered = app
        .send(get(&format!("{LOGS}?executionResult=SUCCESS"), &admin))
        .await
        .json();
    assert_eq!(filtered["total"], 1);
    let filtered = app
        .send(get(
            &format!(
                "{LOGS}?executedAtFrom=2000-01-01&executedAtTo=2999-01-01&entityType=crm.deal"
            ),
            &admin,
        ))
        .await
        .json();
    assert_eq!(filtered["total"], 2);
    assert_eq!(
        app.send(get(&format!("{LOGS}?executedAtFrom=yesterday"), &admin))
            .await
            .status,
        400
    );
    assert_eq!(
        app.send(get(&format!("{LOGS}?executionResult=MAYBE"), &admin))
            .await
            .status,
        400
    );

    // Another tenant sees none of it.
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let intruder = token_for(&app.db, globex.admin).await;
    assert_eq!(app.send(get(LOGS, &intruder)).await.json()["total"], 0);
    assert_eq!(
        app.send(get(&format!("{LOGS}/{id}"), &intruder))
            .await
            .status,
        404
    );
    let res = app
        .send(post_json(
            EXECUTE,
            &intruder,
            json!({"entityType": "crm.deal", "eventType": "updated"}),
        ))
        .await;
    assert_eq!(res.json()["executedRules"], json!([]));
    assert_eq!(res.json()["allowed"], true);

    // Bad bodies.
    let res = app
        .send(post_json(EXECUTE, &admin, json!({"dryRun": true})))
        .await;
    assert_eq!(res.status, 400);
    assert!(res.text().contains("entityType"), "{}", res.text());
}

#[actix_web::test]
async fn a_dry_run_leaves_no_trace_and_a_real_run_has_real_effects() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = rule(
        &app,
        &admin,
        json!({"ruleId": "fx", "entityType": "crm.deal", "successActions": actions()}),
    )
    .await;
    let before = traces(&app.db).await;
    let mails = count(
        &app.db,
        "SELECT count(*) AS n FROM event_outbox WHERE name LIKE 'mail.%'",
    )
    .await;

    let body = json!({"entityType": "crm.deal", "data": {"title": "T"}, "dryRun": true});
    let res = app.send(post_json(EXECUTE, &admin, body)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let out = res.json();
    assert_eq!(out["executedRules"][0]["conditionResult"], true);
    let results = out["executedRules"][0]["actionsExecuted"]["results"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(results.len(), 4);
    assert!(
        results[..3]
            .iter()
            .all(|r| r["result"]["status"] == "skipped (dry run)"),
        "{results:?}"
    );
    assert!(out.get("logIds").is_none());
    let res = app
        .send(post_json(
            &format!("{EXECUTE}/{id}"),
            &admin,
            json!({"data": {"title": "T"}, "dryRun": true}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(res.json().get("logId").is_none());
    assert_eq!(traces(&app.db).await, before, "no log, no event, no job");
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM event_outbox WHERE name LIKE 'mail.%'"
        )
        .await,
        mails
    );

    // The same run for real: a log row, a webhook job, the event, the mail.
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            json!({"entityType": "crm.deal", "data": {"title": "T"}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (logs, events, jobs) = traces(&app.db).await;
    assert_eq!(logs, before.0 + 1);
    assert_eq!(jobs, before.2 + 1);
    let emitted = stoa_testkit::outbox_events_named(&app.db, "crm.deal.flagged").await;
    assert_eq!(emitted.len(), 1);
    assert_eq!(emitted[0]["payload"]["title"], "T");
    assert_eq!(emitted[0]["commandId"], "business_rules.emit");
    assert!(events > before.1);
    let mail = count(
        &app.db,
        "SELECT count(*) AS n FROM event_outbox WHERE payload::text LIKE '%boss@acme.com%'",
    )
    .await;
    assert_eq!(mail, 1, "the mail is queued");
}

#[actix_web::test]
async fn execute_one_rule_by_id() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = rule(
        &app,
        &admin,
        json!({"conditionExpression": {"field": "n", "operator": ">=", "value": 2}}),
    )
    .await;
    let res = app
        .send(post_json(
            &format!("{EXECUTE}/{id}"),
            &admin,
            json!({"data": {"n": 3}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(
        (
            body["success"].clone(),
            body["conditionResult"].clone(),
            body["ruleId"].clone()
        ),
        (json!(true), json!(true), json!("r1"))
    );
    assert!(body["logId"].is_string());
    let missing = uuid::Uuid::new_v4();
    let res = app
        .send(post_json(
            &format!("{EXECUTE}/{missing}"),
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "Rule not found");
    assert_eq!(res.json()["ruleName"], "Unknown");
    let res = app
        .send(post_json(&format!("{EXECUTE}/nope"), &admin, json!({})))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "Invalid rule ID");
    app.send(put_json(RULES, &admin, json!({"id": id, "enabled": false})))
        .await;
    let res = app
        .send(post_json(
            &format!("{EXECUTE}/{id}"),
            &admin,
            json!({"data": {"n": 3}}),
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["success"], false);
    assert_eq!(res.json()["error"], "Rule is disabled");
}

#[actix_web::test]
async fn more_than_a_hundred_applicable_rules_run_none() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let mut conn = app.db.conn().await.unwrap();
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(format!(
            "INSERT INTO business_rules (tenant_id, organization_id, rule_id, rule_name, rule_type, entity_type) \
             SELECT '{}', '{}', 'bulk-' || i, 'Bulk ' || i, 'ACTION', 'crm.deal' FROM generate_series(1, 101) i",
            acme.tenant_id, acme.organization_id
        )),
        &mut *conn,
    )
    .await
    .unwrap();
    drop(conn);
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            json!({"entityType": "crm.deal"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let body = res.json();
    assert_eq!(body["allowed"], false);
    assert_eq!(body["executedRules"], json!([]));
    assert!(
        body["errors"][0]
            .as_str()
            .unwrap()
            .contains("Rule count limit exceeded")
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM business_rule_logs").await,
        0
    );
}

#[actix_web::test]
async fn a_rule_that_fails_is_logged_as_an_error_and_announced_and_the_others_still_run() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    rule(
        &app,
        &admin,
        json!({"ruleId": "fine", "entityType": "crm.deal", "priority": 1}),
    )
    .await;
    // A stored condition that no longer parses (written around the API).
    let mut conn = app.db.conn().await.unwrap();
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(format!(
            "INSERT INTO business_rules (tenant_id, organization_id, rule_id, rule_name, rule_type, entity_type, condition_expression) \
             VALUES ('{}', '{}', 'broken', 'Broken', 'GUARD', 'crm.deal', '{{\"field\": \"a\", \"operator\": \"LIKE\", \"value\": 1}}')",
            acme.tenant_id, acme.organization_id
        )),
        &mut *conn,
    )
    .await
    .unwrap();
    drop(conn);
    let res = app
        .send(post_json(
            EXECUTE,
            &admin,
            json!({"entityType": "crm.deal"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(
        body["allowed"], false,
        "a failing GUARD rule does not allow"
    );
    assert_eq!(body["executedRules"].as_array().unwrap().len(), 2);
    assert_eq!(body["executedRules"][0]["ruleId"], "broken");
    assert_eq!(
        body["executedRules"][0]["error"],
        "the stored condition is invalid"
    );
    assert_eq!(body["executedRules"][1]["conditionResult"], true);
    let errors = count(
        &app.db,
        "SELECT count(*) AS n FROM business_rule_logs WHERE execution_result = 'ERROR'",
    )
    .await;
    assert_eq!(errors, 1);
    let failed =
        stoa_testkit::outbox_events_named(&app.db, "business_rules.rule.execution_failed").await;
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["payload"]["ruleId"], "broken");
    // A dry run announces nothing.
    app.send(post_json(
        EXECUTE,
        &admin,
        json!({"entityType": "crm.deal", "dryRun": true}),
    ))
    .await;
    assert_eq!(
        stoa_testkit::outbox_events_named(&app.db, "business_rules.rule.execution_failed")
            .await
            .len(),
        1
    );
}

/// Statements one request costs on this thread (the test app runs it here).
async fn statements_of<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    req: actix_web::test::TestRequest,
) -> (u64, Value) {
    let before = stoa_core::db::thread_queries();
    let res = app.send(req).await;
    let n = stoa_core::db::thread_queries() - before;
    assert_eq!(res.status, 200, "{}", res.text());
    (n, res.json())
}

#[actix_web::test]
async fn execute_costs_the_same_statements_whatever_the_rule_count() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let body = |dry: bool| {
        json!({"entityType": "crm.deal", "eventType": "placed", "entityId": "o-1", "dryRun": dry,
               "data": {"id": "o-1", "total": 420, "customer": {"tier": "gold"}}})
    };
    let rule_body = |i: usize| {
        json!({"ruleId": format!("order-{i:02}"), "ruleName": format!("Order {i}"),
               "ruleType": "VALIDATION", "entityType": "crm.deal", "eventType": "placed",
               "conditionExpression": {"operator": "AND", "rules": [
                   {"field": "total", "operator": ">=", "value": i * 10},
                   {"field": "customer.tier", "operator": "=", "value": "gold"}]},
               "successActions": [{"type": "LOG", "config": {"message": "order {{data.id}} passed {{ruleId}}"}}],
               "failureActions": [{"type": "SHOW_WARNING", "config": {"message": "{{ruleName}} failed"}}]})
    };
    rule(&app, &admin, rule_body(0)).await;
    let mut few = Vec::new();
    for dry in [true, false] {
        statements_of(&app, post_json(EXECUTE, &admin, body(dry))).await;
        few.push(statements_of(&app, post_json(EXECUTE, &admin, body(dry))).await);
    }
    for i in 1..50 {
        rule(&app, &admin, rule_body(i)).await;
    }
    for (dry, (before, _)) in [true, false].into_iter().zip(few) {
        // The first run after the rule writes reloads the tenant's rules.
        statements_of(&app, post_json(EXECUTE, &admin, body(dry))).await;
        let (n, answer) = statements_of(&app, post_json(EXECUTE, &admin, body(dry))).await;
        assert_eq!(answer["executedRules"].as_array().unwrap().len(), 50);
        assert_eq!(n, before, "dry run {dry}: a statement more per rule?");
        if dry {
            // The caller's session check only: cached rules cost no query.
            assert!(n <= 1, "a dry run cost {n} statements");
        }
    }
    let (_, answer) = statements_of(&app, post_json(EXECUTE, &admin, body(true))).await;
    // Placeholders read the run's data and each rule's own id and name.
    let passed = &answer["executedRules"][0];
    assert_eq!(passed["ruleId"], "order-00", "{answer}");
    assert_eq!(
        passed["actionsExecuted"]["results"][0]["result"]["message"],
        "order o-1 passed order-00"
    );
    let failed = &answer["executedRules"][49];
    assert_eq!(failed["ruleId"], "order-49", "{answer}");
    assert_eq!(
        failed["actionsExecuted"]["results"][0]["result"]["message"],
        "Order 49 failed"
    );
}
