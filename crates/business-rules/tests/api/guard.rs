//! GUARD rules on real writes: a deal stage change through the deals API
//! and through a bulk job item is refused (422 / failed item), the deal
//! unchanged, no action-log entry.

use serde_json::{Value, json};
use uuid::Uuid;

use super::support::*;

/// A GUARD rule: a deal may enter stage `won` only with a value of 1000 or more.
async fn won_needs_value<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    won: Uuid,
) -> Uuid {
    rule(app, token, json!({
        "ruleId": "won-needs-value", "ruleName": "Won needs value", "ruleType": "GUARD",
        "entityType": "customers.deal", "eventType": "stage_changed",
        "conditionExpression": {"operator": "OR", "rules": [
            {"field": "pipelineStageId", "operator": "!=", "value": won},
            {"field": "valueAmount", "operator": ">=", "value": 1000},
        ]},
        "failureActions": [{"type": "BLOCK_TRANSITION", "config": {"message": "Small deals cannot be won"}}],
    }))
    .await
}

async fn stage_of<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
    id: Uuid,
) -> Value {
    let res = app.send(get(&format!("{DEALS}/{id}"), token)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()["deal"]["pipelineStageId"].clone()
}

async fn update_entries(db: &stoa_core::db::Db, id: Uuid) -> i64 {
    count(db, &format!("SELECT count(*) AS n FROM action_logs WHERE resource_id = '{id}' AND command_id LIKE 'customers.deals.%' AND command_id <> 'customers.deals.create'")).await
}

#[actix_web::test]
async fn a_guard_rule_refuses_a_deal_stage_change_through_the_api() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (_, [new, won]) = pipeline(&app, &admin).await;
    let small = deal(&app, &admin, json!({"title": "Small", "pipelineStageId": new, "valueAmount": "10", "valueCurrency": "EUR"})).await;
    let big = deal(&app, &admin, json!({"title": "Big", "pipelineStageId": new, "valueAmount": "5000", "valueCurrency": "EUR"})).await;
    // Without rules every write goes through.
    let res = app
        .send(put_json(
            &format!("{DEALS}/{small}"),
            &admin,
            json!({"title": "Small deal"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    won_needs_value(&app, &admin, won).await;
    let res = app
        .send(put_json(
            &format!("{DEALS}/{small}"),
            &admin,
            json!({"pipelineStageId": won}),
        ))
        .await;
    assert_eq!(res.status, 422, "{}", res.text());
    let body = res.json();
    assert_eq!(body["code"], "guard_refused");
    assert_eq!(body["guard"], "business_rules.guard");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.contains("Won needs value")
            && error.contains("won-needs-value")
            && error.contains("Small deals cannot be won"),
        "{error}"
    );
    assert_eq!(
        stage_of(&app, &admin, small).await,
        json!(new),
        "the deal is unchanged"
    );
    assert_eq!(
        update_entries(&app.db, small).await,
        1,
        "only the earlier title change is logged"
    );
    // The decision itself is kept in guard_logs.
    let kept = count(
        &app.db,
        "SELECT count(*) AS n FROM guard_logs WHERE guard = 'business_rules.guard'",
    )
    .await;
    assert_eq!(kept, 1);

    // Other writes of the deal and other deals pass.
    let res = app
        .send(put_json(
            &format!("{DEALS}/{small}"),
            &admin,
            json!({"title": "Still small"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(put_json(
            &format!("{DEALS}/{big}"),
            &admin,
            json!({"pipelineStageId": won}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(stage_of(&app, &admin, big).await, json!(won));

    // A disabled rule no longer guards.
    let rules = app.send(get(RULES, &admin)).await.json();
    let id = rules["items"][0]["id"].as_str().unwrap().to_string();
    let res = app
        .send(put_json(RULES, &admin, json!({"id": id, "enabled": false})))
        .await;
    assert_eq!(res.status, 200);
    let res = app
        .send(put_json(
            &format!("{DEALS}/{small}"),
            &admin,
            json!({"pipelineStageId": won}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}

#[actix_web::test]
async fn a_guard_rule_fails_a_bulk_job_item_and_keeps_the_deal() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (_, [new, won]) = pipeline(&app, &admin).await;
    let small = deal(&app, &admin, json!({"title": "Small", "pipelineStageId": new, "valueAmount": "10", "valueCurrency": "EUR"})).await;
    let big = deal(&app, &admin, json!({"title": "Big", "pipelineStageId": new, "valueAmount": "5000", "valueCurrency": "EUR"})).await;
    won_needs_value(&app, &admin, won).await;
    let res = app
        .send(post_json(
            "/api/customers/deals/bulk-update-stage",
            &admin,
            json!({"ids": [small, big], "pipelineStageId": won}),
        ))
        .await;
    assert!(res.status.is_success(), "{}", res.text());
    let progress = res.json()["progressJobId"].as_str().unwrap().to_string();
    assert!(workers(&app.db).run_one().await.unwrap());
    let job = app
        .send(get(&format!("/api/progress/jobs/{progress}"), &admin))
        .await
        .json();
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["resultSummary"]["failedCount"], 1, "{job}");
    let failed = &job["resultSummary"]["failedItems"][0];
    assert_eq!(failed["id"], json!(small));
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("won-needs-value"),
        "{failed}"
    );
    assert_eq!(stage_of(&app, &admin, small).await, json!(new));
    assert_eq!(stage_of(&app, &admin, big).await, json!(won));
    assert_eq!(
        update_entries(&app.db, small).await,
        0,
        "no entry for the refused item"
    );
    assert_eq!(update_entries(&app.db, big).await, 1);
}

#[actix_web::test]
async fn undoing_into_a_refused_state_is_refused_too() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (_, [new, won]) = pipeline(&app, &admin).await;
    let small = deal(&app, &admin, json!({"title": "Small", "pipelineStageId": won, "valueAmount": "10", "valueCurrency": "EUR"})).await;
    let res = app
        .send(put_json(
            &format!("{DEALS}/{small}"),
            &admin,
            json!({"pipelineStageId": new}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let token = res.operation().unwrap().undo_token.unwrap();
    won_needs_value(&app, &admin, won).await;
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/undo",
            &admin,
            json!({"undoToken": token}),
        ))
        .await;
    assert_eq!(res.status, 422, "{}", res.text());
    assert!(res.text().contains("won-needs-value"), "{}", res.text());
    assert_eq!(stage_of(&app, &admin, small).await, json!(new));
}

/// A GUARD rule (titles may not be "Blocked") written straight into the
/// table, as another process would: the version trigger bumps the tenant's
/// version, this process's cache is not told.
async fn guard_rule_written_elsewhere(db: &stoa_core::db::Db, acme: &Tenant) {
    let mut conn = db
        .conn()
        .await
        .unwrap_or_else(|e| panic!("connection: {e}"));
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(format!(
            "INSERT INTO business_rules (tenant_id, organization_id, rule_id, rule_name, rule_type, entity_type, condition_expression) \
             VALUES ('{}', '{}', 'elsewhere', 'Made elsewhere', 'GUARD', 'customers.deal', \
             '{{\"field\": \"title\", \"operator\": \"!=\", \"value\": \"Blocked\"}}')",
            acme.tenant_id, acme.organization_id
        )),
        &mut *conn,
    )
    .await
    .unwrap_or_else(|e| panic!("insert the rule: {e}"));
}

#[actix_web::test]
async fn a_rule_written_by_another_process_guards_within_the_refresh_period() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (_, [new, _]) = pipeline(&app, &admin).await;
    let small = deal(&app, &admin, json!({"title": "Small", "pipelineStageId": new, "valueAmount": "10", "valueCurrency": "EUR"})).await;
    // This process has read the tenant's (empty) rules.
    let res = app
        .send(put_json(
            &format!("{DEALS}/{small}"),
            &admin,
            json!({"title": "Warm"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    // Another process adds a GUARD rule: straight into the table (the
    // version trigger bumps the tenant's version; this process's cache is
    // not told).
    guard_rule_written_elsewhere(&app.db, &acme).await;
    tokio::time::sleep(stoa_business_rules::cache::REFRESH + std::time::Duration::from_millis(100))
        .await;
    let res = app
        .send(put_json(
            &format!("{DEALS}/{small}"),
            &admin,
            json!({"title": "Blocked"}),
        ))
        .await;
    assert_eq!(res.status, 422, "{}", res.text());
    assert!(res.text().contains("elsewhere"));
    let res = app
        .send(put_json(
            &format!("{DEALS}/{small}"),
            &admin,
            json!({"title": "Fine"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}

#[actix_web::test]
async fn rules_never_guard_the_rules_themselves() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    // No module declares the rules as an entity rules may watch: refused.
    let lockout = json!({
        "ruleId": "lockout", "ruleName": "Lockout", "ruleType": "GUARD",
        "entityType": "business_rules.rule",
        "conditionExpression": {"field": "nothing", "operator": "IS_NOT_EMPTY"},
    });
    let res = app.send(post_json(RULES, &admin, lockout)).await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert!(res.text().contains("entityType"), "{}", res.text());
    // One stored before that check (written here by hand) guards nothing either.
    let id = rule(
        &app,
        &admin,
        json!({
            "ruleId": "lockout", "ruleType": "GUARD", "entityType": "test.thing",
            "conditionExpression": {"field": "title", "operator": "IS_NOT_EMPTY"},
        }),
    )
    .await;
    count(
        &app.db,
        &format!(
            "WITH u AS (UPDATE business_rules SET entity_type = 'business_rules.rule', \
             condition_expression = '{{\"field\": \"nothing\", \"operator\": \"IS_NOT_EMPTY\"}}' \
             WHERE id = '{id}' RETURNING 1) SELECT count(*) AS n FROM u"
        ),
    )
    .await;
    stoa_business_rules::cache::invalidate(acme.tenant_id);
    // Its writes pass (an edit must name a declared entity type; a delete
    // is never guarded by rules).
    let res = app
        .send(put_json(RULES, &admin, json!({"id": id, "enabled": false})))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert!(res.text().contains("entityType"), "{}", res.text());
    let res = app.send(delete(&format!("{RULES}?id={id}"), &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    // The same rule on another entity would refuse: the guard is live.
    let res = app
        .send(post_json(RULES, &admin, json!({"ruleId": "deals-locked", "ruleName": "Deals locked", "ruleType": "GUARD",
            "entityType": "customers.deal", "conditionExpression": {"field": "title", "operator": "IS_EMPTY"}})))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let res = app
        .send(post_json(DEALS, &admin, json!({"title": "Refused"})))
        .await;
    assert_eq!(res.status, 422, "{}", res.text());
    assert!(res.text().contains("deals-locked"));
}

/// `applies_now` (the bulk jobs' choice of path) reads a tenant's rules once
/// the cache is older than its refresh period, where `applies_to` can only
/// answer "maybe" (`true`).
#[actix_web::test]
async fn applies_now_reads_the_rules_when_the_cache_is_stale() {
    use stoa_core::command::WriteGuard;
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let guard = stoa_business_rules::guard::RulesGuard;
    let command = "customers.deals.bulk_update_stage";
    let tenant = Some(acme.tenant_id);
    let stale = stoa_business_rules::cache::REFRESH + std::time::Duration::from_millis(100);
    let mut conn = app.db.conn().await.unwrap();

    // Never read: maybe; read now: no guard rule.
    assert!(guard.applies_to(command, tenant));
    assert!(!guard.applies_now(&mut conn, command, tenant).await.unwrap());
    assert!(!guard.applies_to(command, tenant));
    // Stale again: `applies_to` must say maybe, `applies_now` reads and says no.
    tokio::time::sleep(stale).await;
    assert!(guard.applies_to(command, tenant));
    assert!(!guard.applies_now(&mut conn, command, tenant).await.unwrap());

    // A GUARD rule written by another process: seen once the cache is stale.
    guard_rule_written_elsewhere(&app.db, &acme).await;
    tokio::time::sleep(stale).await;
    assert!(guard.applies_now(&mut conn, command, tenant).await.unwrap());
    assert!(guard.applies_to(command, tenant));
    // The list of guards answers as its guards do; no tenant, no rules.
    let guards = stoa_core::command::WriteGuards::default().with(std::sync::Arc::new(guard));
    assert!(
        guards
            .applies_now(&mut conn, command, tenant)
            .await
            .unwrap()
    );
    assert!(!guards.applies_now(&mut conn, command, None).await.unwrap());
}
