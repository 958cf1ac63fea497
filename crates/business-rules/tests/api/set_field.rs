//! `SET_FIELD`: a rule triggered by a deal update writes another field of
//! the deal through the deals' own update command after the update commits
//! (action log attributed to the rule, undoable, no loop), GUARD rules still
//! refuse it, a dry run and the execute endpoint write nothing, and a rule
//! of one tenant never writes another tenant's deals.

use serde_json::{Value, json};
use uuid::Uuid;

use super::support::*;

const ACTIONS: &str = "/api/audit_logs/audit-logs/actions";

/// A rule: a deal updated to `won` gets probability 100 and a marked title.
async fn won_is_certain<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
) -> Uuid {
    rule(app, token, json!({
        "ruleId": "won-is-certain", "ruleName": "Won is certain",
        "entityType": "customers.deal", "eventType": "updated",
        "conditionExpression": {"field": "status", "operator": "=", "value": "won"},
        "successActions": [
            {"type": "SET_FIELD", "config": {"field": "probability", "value": 100}},
            {"type": "SET_FIELD", "config": {"field": "title", "value": "{{data.title}} (won)"}},
        ],
    }))
    .await
}

async fn deal_of<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    id: Uuid,
) -> Value {
    let res = app.send(get(&format!("{DEALS}/{id}"), token)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()["deal"].clone()
}

async fn update_entries(db: &stoa_core::db::Db, id: Uuid) -> i64 {
    count(
        db,
        &format!("SELECT count(*) AS n FROM action_logs WHERE resource_id = '{id}' AND command_id = 'customers.deals.update'"),
    )
    .await
}

async fn win<S: stoa_testkit::AppService>(app: &stoa_testkit::TestApp<S>, token: &str, id: Uuid) {
    let res = app
        .send(put_json(
            &format!("{DEALS}/{id}"),
            token,
            json!({"status": "won"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}

#[actix_web::test]
async fn a_rule_writes_a_field_of_the_updated_deal_attributed_to_the_rule_without_looping() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let rule_id = won_is_certain(&app, &admin).await;
    let id = deal(&app, &admin, json!({"title": "Big", "probability": 10})).await;
    win(&app, &admin, id).await;
    // The rule runs after commit, from the outbox.
    assert_eq!(deal_of(&app, &admin, id).await["probability"], 10);
    dispatch(&app.db).await;
    let after = deal_of(&app, &admin, id).await;
    assert_eq!(after["probability"], 100, "{after}");
    assert_eq!(after["title"], "Big (won)");
    assert_eq!(after["status"], "won");

    // One run of the rule: its log shows both writes done.
    let logs = app.send(get(LOGS, &admin)).await.json();
    assert_eq!(logs["total"], 1, "{logs}");
    let done = &logs["items"][0]["outputContext"]["actionsExecuted"];
    assert_eq!(
        done,
        &json!([{"type": "SET_FIELD", "success": true, "error": null},
                {"type": "SET_FIELD", "success": true, "error": null}])
    );

    // The action log: the user's update, then the rule's two writes, made
    // by no user (system), naming the rule, undoable.
    let res = app
        .send(get(
            &format!("{ACTIONS}?resourceKind=customers.deal&resourceId={id}&sortField=createdAt&sortDir=asc"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let items: Vec<Value> = res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["commandId"] == "customers.deals.update")
        .cloned()
        .collect();
    assert_eq!(items.len(), 3, "{items:?}");
    let by_rule: Vec<&Value> = items
        .iter()
        .filter(|i| i["context"]["businessRule"]["ruleId"] == "won-is-certain")
        .collect();
    assert_eq!(by_rule.len(), 2, "{items:?}");
    for entry in &by_rule {
        assert_eq!(entry["actorUserId"], Value::Null);
        assert_eq!(entry["context"]["businessRule"]["id"], json!(rule_id));
        assert!(entry["undoToken"].is_string());
    }
    let source: Vec<String> = {
        let mut conn = app.db.conn().await.unwrap();
        use diesel_async::RunQueryDsl;
        #[derive(diesel::QueryableByName)]
        struct Source {
            #[diesel(sql_type = diesel::sql_types::Text)]
            source_key: String,
        }
        diesel::sql_query(format!(
            "SELECT source_key FROM action_logs WHERE resource_id = '{id}' AND context_json ? 'businessRule'"
        ))
        .load::<Source>(&mut *conn)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.source_key)
        .collect()
    };
    assert_eq!(source, ["system", "system"]);

    // No loop: the rule's writes emitted `updated` events (the deal is still
    // won), but they trigger no rule; nothing else is written.
    dispatch(&app.db).await;
    assert_eq!(update_entries(&app.db, id).await, 3);
    assert_eq!(app.send(get(LOGS, &admin)).await.json()["total"], 1);
    assert_eq!(deal_of(&app, &admin, id).await["title"], "Big (won)");

    // A user's next update runs the rule again (once).
    let res = app
        .send(put_json(
            &format!("{DEALS}/{id}"),
            &admin,
            json!({"title": "Bigger"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    dispatch(&app.db).await;
    assert_eq!(deal_of(&app, &admin, id).await["title"], "Bigger (won)");
    assert_eq!(app.send(get(LOGS, &admin)).await.json()["total"], 2);
}

#[actix_web::test]
async fn a_guard_rule_refuses_a_rules_write_and_the_log_says_so() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    rule(
        &app,
        &admin,
        json!({
            "ruleId": "capped", "ruleName": "Probability capped", "ruleType": "GUARD",
            "entityType": "customers.deal",
            "conditionExpression": {"field": "probability", "operator": "<=", "value": 90},
        }),
    )
    .await;
    won_is_certain(&app, &admin).await;
    let id = deal(&app, &admin, json!({"title": "Big", "probability": 10})).await;
    win(&app, &admin, id).await;
    dispatch(&app.db).await;
    let after = deal_of(&app, &admin, id).await;
    assert_eq!(after["probability"], 10, "the guard refused the write");
    // The title write passed the guard (probability still 10).
    assert_eq!(after["title"], "Big (won)");
    let logs = app.send(get(LOGS, &admin)).await.json();
    let run = logs["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["ruleId"] != Value::Null && l["entityType"] == "customers.deal")
        .unwrap()
        .clone();
    let done = run["outputContext"]["actionsExecuted"].as_array().unwrap();
    assert_eq!(done[0]["success"], false, "{run}");
    assert!(
        done[0]["error"]
            .as_str()
            .unwrap()
            .contains("Probability capped"),
        "{run}"
    );
    assert_eq!(done[1]["success"], true, "{run}");
    assert_eq!(
        update_entries(&app.db, id).await,
        2,
        "the user's update and the title write"
    );
}

#[actix_web::test]
async fn dry_runs_and_the_execute_endpoints_write_nothing() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let rule_id = won_is_certain(&app, &admin).await;
    let id = deal(&app, &admin, json!({"title": "Big", "probability": 10})).await;
    let data = json!({"id": id, "title": "Big", "status": "won"});
    for dry_run in [true, false] {
        let res = app
            .send(post_json(
                &format!("{EXECUTE}/{rule_id}"),
                &admin,
                json!({"entityId": id, "data": data, "dryRun": dry_run}),
            ))
            .await;
        assert_eq!(res.status, 200, "{}", res.text());
        let results = &res.json()["actionsExecuted"]["results"];
        assert_eq!(results[0]["result"]["field"], "probability");
        assert_eq!(results[0]["result"]["value"], 100);
        assert_eq!(results[1]["result"]["value"], "Big (won)");
        let status = results[0]["result"]["status"].as_str().unwrap().to_string();
        if dry_run {
            assert_eq!(status, "skipped (dry run)");
        } else {
            assert!(status.starts_with("not written"), "{status}");
        }
        let res = app
            .send(post_json(
                EXECUTE,
                &admin,
                json!({"entityType": "customers.deal", "eventType": "updated", "entityId": id, "data": data, "dryRun": dry_run}),
            ))
            .await;
        assert_eq!(res.status, 200, "{}", res.text());
        assert_eq!(res.json()["executedRules"][0]["conditionResult"], true);
    }
    dispatch(&app.db).await;
    assert_eq!(
        deal_of(&app, &admin, id).await["probability"],
        10,
        "nothing written"
    );
    assert_eq!(update_entries(&app.db, id).await, 0);
}

#[actix_web::test]
async fn saving_a_writing_rule_takes_the_deals_write_feature_and_checks_values() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    // A placeholder value is checked when the rule runs.
    let body = json!({"ruleId": "p", "ruleName": "P", "ruleType": "ACTION", "entityType": "customers.deal",
        "successActions": [{"type": "SET_FIELD", "config": {"field": "probability", "value": "{{data.valueAmount}}"}},
                           {"type": "SET_FIELD", "config": {"field": "description", "value": null}}]});
    let res = app.send(post_json(RULES, &admin, body.clone())).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let p = id_of(&res.json());
    // Someone who may write rules about deals but not deals cannot save one
    // that writes deals.
    let rules_only = user_with_features(
        &app.db,
        &acme,
        "r@acme.com",
        &["business_rules.*", "customers.deals.view"],
        None,
        None,
    )
    .await;
    let rules_only = token_for(&app.db, rules_only).await;
    let mut other = body.clone();
    other["ruleId"] = json!("q");
    let res = app.send(post_json(RULES, &rules_only, other.clone())).await;
    assert_eq!(res.status, 403, "{}", res.text());
    other["successActions"] = json!([{"type": "LOG", "config": {"message": "m"}}]);
    let res = app.send(post_json(RULES, &rules_only, other)).await;
    assert_eq!(res.status, 201, "{}", res.text());
    // A placeholder resolving to an invalid value fails the write, not the deal.
    let id = deal(
        &app,
        &admin,
        json!({"title": "T", "probability": 5, "valueAmount": "5000", "valueCurrency": "EUR"}),
    )
    .await;
    dispatch(&app.db).await;
    let res = app
        .send(put_json(
            RULES,
            &admin,
            json!({"id": p, "eventType": "updated"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(put_json(
            &format!("{DEALS}/{id}"),
            &admin,
            json!({"description": "d"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    dispatch(&app.db).await;
    let after = deal_of(&app, &admin, id).await;
    assert_eq!(after["probability"], 5);
    assert_eq!(after["description"], Value::Null, "the second write ran");
    let logs = app.send(get(LOGS, &admin)).await.json();
    let done = &logs["items"][0]["outputContext"]["actionsExecuted"];
    assert_eq!(done[0]["success"], false, "{logs}");
    assert!(
        done[0]["error"]
            .as_str()
            .unwrap()
            .contains("probability is not a valid value"),
        "{logs}"
    );
    assert_eq!(done[1]["success"], true, "{logs}");
}

#[actix_web::test]
async fn a_rule_of_one_tenant_never_writes_another_tenants_deals() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let acme_admin = token_for(&app.db, acme.admin).await;
    let globex_admin = token_for(&app.db, globex.admin).await;
    won_is_certain(&app, &globex_admin).await;
    let acme_deal = deal(
        &app,
        &acme_admin,
        json!({"title": "Acme", "probability": 10}),
    )
    .await;
    let globex_deal = deal(
        &app,
        &globex_admin,
        json!({"title": "Globex", "probability": 10}),
    )
    .await;
    win(&app, &acme_admin, acme_deal).await;
    win(&app, &globex_admin, globex_deal).await;
    dispatch(&app.db).await;
    let acme_after = deal_of(&app, &acme_admin, acme_deal).await;
    assert_eq!(acme_after["probability"], 10);
    assert_eq!(acme_after["title"], "Acme");
    assert_eq!(update_entries(&app.db, acme_deal).await, 1);
    assert_eq!(
        deal_of(&app, &globex_admin, globex_deal).await["probability"],
        100
    );
    assert_eq!(app.send(get(LOGS, &acme_admin)).await.json()["total"], 0);
    assert_eq!(app.send(get(LOGS, &globex_admin)).await.json()["total"], 1);
}
