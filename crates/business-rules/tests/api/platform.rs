//! `CALL_OPEN_MERCATO`: a rule triggered by a deal's stage change calls a
//! platform operation in process, as the action's API key — effect visible,
//! the action log naming the key, no loop; a key without the operation's
//! feature, a revoked key and another tenant's key change nothing; the
//! execute endpoints never call; saving checks the operation, the key and
//! `api_keys.create`; `platform-call-options` lists the keys.

use std::sync::Arc;

use serde_json::{Value, json};
use stoa_acl::PlatformSlot;
use stoa_core::db::Db;
use stoa_testkit::{AppService, TestApp};
use uuid::Uuid;

use super::support::*;

const OPTIONS: &str = "/api/business_rules/platform-call-options";

/// The in-process caller over the test app (its routes and the access
/// matrix of the mounted operations), as the server registers it.
pub(crate) fn caller<S: AppService>(app: &TestApp<S>) -> PlatformSlot {
    let registry = registry();
    let auth = stoa_auth::testing::state_with_registry(&app.db, registry.clone(), |_| {});
    let matrix = stoa_acl::AccessMatrix::new(registry.operations(), auth);
    let ctx = app.ctx.clone().with_access(Arc::new(matrix));
    let in_process = stoa_core::http::InProcess::start(ctx).unwrap();
    let keys = stoa_api_keys::ApiKeyAuthenticator::new(app.db.clone(), users());
    let guards = registry.write_guards().clone().logging_to(app.db.clone());
    let slot = PlatformSlot::default();
    assert!(slot.set(Arc::new(stoa_api_keys::KeyCaller::new(
        keys, guards, in_process
    ))));
    slot
}

/// A role of `tenant` by name.
pub(crate) async fn role(db: &Db, tenant: Uuid, name: &str) -> Uuid {
    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = diesel::sql_types::Uuid)]
        id: Uuid,
    }
    use diesel_async::RunQueryDsl;
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(format!(
        "WITH found AS (SELECT id FROM roles WHERE tenant_id = '{tenant}' AND name = '{name}'), \
         made AS (INSERT INTO roles (tenant_id, name) SELECT '{tenant}', '{name}' \
         WHERE NOT EXISTS (SELECT 1 FROM found) RETURNING id) \
         SELECT id FROM found UNION ALL SELECT id FROM made"
    ))
    .get_result::<Id>(&mut *conn)
    .await
    .unwrap()
    .id
}

/// An API key of `tenant` with `roles`, made by `creator`.
pub(crate) async fn api_key(db: &Db, t: &Tenant, name: &str, roles: &[Uuid]) -> Uuid {
    use diesel_async::RunQueryDsl;
    let id = Uuid::new_v4();
    let prefix = format!("omk_{}", &id.simple().to_string()[..8]);
    let roles: Vec<String> = roles.iter().map(|r| format!("'{r}'")).collect();
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(format!(
        "INSERT INTO api_keys (id, name, tenant_id, organization_id, key_prefix, key_hash, \
         role_ids, created_by, creator_user_id) VALUES ('{id}', '{name}', '{}', '{}', '{prefix}', \
         '{}', ARRAY[{}]::uuid[], '{}', '{}')",
        t.tenant_id,
        t.organization_id,
        "0".repeat(64),
        roles.join(","),
        t.admin,
        t.admin
    ))
    .execute(&mut *conn)
    .await
    .unwrap();
    id
}

/// A rule: a deal moved to another stage gets a follow-up deal, created
/// through `POST /api/customers/deals` as `key`.
pub(crate) fn follow_up(key: Uuid) -> Value {
    json!({
        "ruleId": "follow-up", "ruleName": "Follow up", "ruleType": "ACTION",
        "entityType": "customers.deal", "eventType": "stage_changed",
        "successActions": [{"type": "CALL_OPEN_MERCATO", "config": {
            "endpoint": "/api/customers/deals", "method": "POST", "apiKeyId": key,
            "body": {"title": "Follow-up of {{data.title}}"},
        }}],
    })
}

/// Creates a deal in stage 1 and moves it to stage 2; answers the deal.
pub(crate) async fn move_deal<S: AppService>(app: &TestApp<S>, token: &str, title: &str) -> Uuid {
    let (pipeline, [first, second]) = pipeline(app, token).await;
    let id = deal(
        app,
        token,
        json!({"title": title, "pipelineId": pipeline, "pipelineStageId": first}),
    )
    .await;
    let res = app
        .send(put_json(
            &format!("{DEALS}/{id}"),
            token,
            json!({"pipelineStageId": second}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    id
}

pub(crate) async fn deals_titled(db: &Db, tenant: Uuid, title: &str) -> i64 {
    count(
        db,
        &format!(
            "SELECT count(*) AS n FROM customer_deals WHERE tenant_id = '{tenant}' \
             AND title = '{title}'"
        ),
    )
    .await
}

async fn only_log<S: AppService>(app: &TestApp<S>, token: &str) -> Value {
    let logs = app.send(get(LOGS, token)).await.json();
    assert_eq!(logs["total"], 1, "{logs}");
    logs["items"][0]["outputContext"]["actionsExecuted"][0].clone()
}

#[actix_web::test]
async fn a_rule_calls_the_platform_as_its_key_and_its_write_triggers_no_rule() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let admin_role = role(&app.db, acme.tenant_id, "admin").await;
    let key = api_key(&app.db, &acme, "rules", &[admin_role]).await;
    rule(&app, &admin, follow_up(key)).await;
    // A second rule would loop if the call's own write triggered rules:
    // every created deal creates another.
    rule(&app, &admin, json!({
        "ruleId": "echo", "ruleName": "Echo", "entityType": "customers.deal",
        "eventType": "created",
        "conditionExpression": {"field": "title", "operator": "STARTS_WITH", "value": "Follow-up"},
        "successActions": [{"type": "CALL_OPEN_MERCATO", "config": {
            "endpoint": "/api/customers/deals", "method": "POST", "apiKeyId": key,
            "body": {"title": "Follow-up again"},
        }}],
    }))
    .await;
    move_deal(&app, &admin, "Big").await;
    dispatch_with(&app.db, caller(&app)).await;

    // The rule's log names the key and the operation's answer.
    let logs = app
        .send(get(&format!("{LOGS}?entityType=customers.deal"), &admin))
        .await
        .json();
    assert_eq!(
        deals_titled(&app.db, acme.tenant_id, "Follow-up of Big").await,
        1,
        "{logs}"
    );
    assert_eq!(
        deals_titled(&app.db, acme.tenant_id, "Follow-up again").await,
        0
    );
    let of = |name: &str| -> Vec<Value> {
        logs["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["ruleName"] == name)
            .map(|l| l["outputContext"]["actionsExecuted"][0].clone())
            .collect()
    };
    let done = of("Follow up");
    assert_eq!(done.len(), 1, "{logs}");
    // The echo rule ran for the user's deal only, not for the rule's one.
    assert_eq!(of("Echo").len(), 1, "{logs}");
    assert_eq!(done[0]["type"], "CALL_OPEN_MERCATO");
    assert_eq!(done[0]["success"], true, "{logs}");
    assert_eq!(done[0]["apiKeyId"], json!(key));
    assert_eq!(done[0]["httpStatus"], 201);
    // The action log records the creation as the key, from a rule.
    let by_key = count(
        &app.db,
        &format!(
            "SELECT count(*) AS n FROM action_logs WHERE command_id = 'customers.deals.create' \
             AND actor_user_id = '{key}' AND source_key = 'business_rule'"
        ),
    )
    .await;
    assert_eq!(by_key, 1);
    // The key's use is recorded like a request's.
    assert_eq!(
        count(
            &app.db,
            &format!("SELECT count(*) AS n FROM api_keys WHERE id = '{key}'")
        )
        .await,
        1
    );
}

#[actix_web::test]
async fn a_key_without_the_feature_or_revoked_changes_nothing_and_the_log_says_why() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let bare = role(&app.db, acme.tenant_id, "bare").await;
    let key = api_key(&app.db, &acme, "weak", &[bare]).await;
    let rule_id = rule(&app, &admin, follow_up(key)).await;
    move_deal(&app, &admin, "Big").await;
    let slot = caller(&app);
    dispatch_with(&app.db, slot.clone()).await;
    assert_eq!(
        deals_titled(&app.db, acme.tenant_id, "Follow-up of Big").await,
        0
    );
    let done = only_log(&app, &admin).await;
    assert_eq!(done["success"], false, "{done}");
    assert_eq!(done["apiKeyId"], json!(key));
    assert_eq!(done["httpStatus"], 403);
    assert!(
        done["error"]
            .as_str()
            .unwrap()
            .contains("failed with status 403"),
        "{done}"
    );

    // A key revoked after the rule was saved is refused.
    let admin_role = role(&app.db, acme.tenant_id, "admin").await;
    let good = api_key(&app.db, &acme, "good", &[admin_role]).await;
    let res = app
        .send(put_json(
            RULES,
            &admin,
            json!({"id": rule_id, "successActions": follow_up(good)["successActions"]}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    count(
        &app.db,
        &format!("WITH d AS (UPDATE api_keys SET deleted_at = now() WHERE id = '{good}' RETURNING 1) SELECT count(*) AS n FROM d"),
    )
    .await;
    move_deal(&app, &admin, "Second").await;
    dispatch_with(&app.db, slot).await;
    assert_eq!(
        deals_titled(&app.db, acme.tenant_id, "Follow-up of Second").await,
        0
    );
    let logs = app
        .send(get(&format!("{LOGS}?sortField=id&sortDir=desc"), &admin))
        .await
        .json();
    let last = &logs["items"][0]["outputContext"]["actionsExecuted"][0];
    assert_eq!(last["success"], false, "{logs}");
    assert!(
        last["error"].as_str().unwrap().contains("not available"),
        "{last}"
    );
}

#[actix_web::test]
async fn execute_and_dry_runs_never_call_and_without_a_caller_the_action_fails() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let admin_role = role(&app.db, acme.tenant_id, "admin").await;
    let key = api_key(&app.db, &acme, "rules", &[admin_role]).await;
    rule(&app, &admin, follow_up(key)).await;
    for (dry, status) in [
        (true, "skipped (dry run)"),
        (
            false,
            "not called (only rules triggered by events call the platform)",
        ),
    ] {
        let res = app
            .send(post_json(
                EXECUTE,
                &admin,
                json!({"entityType": "customers.deal", "eventType": "stage_changed",
                       "data": {"title": "X"}, "dryRun": dry}),
            ))
            .await;
        assert_eq!(res.status, 200, "{}", res.text());
        let result = &res.json()["executedRules"][0]["actionsExecuted"]["results"][0];
        assert_eq!(result["result"]["status"], status, "{result}");
        assert_eq!(result["result"]["body"], json!({"title": "Follow-up of X"}));
    }
    assert_eq!(
        deals_titled(&app.db, acme.tenant_id, "Follow-up of X").await,
        0
    );
    // A process without the in-process caller: the action fails, logged.
    move_deal(&app, &admin, "Big").await;
    dispatch(&app.db).await;
    assert_eq!(
        deals_titled(&app.db, acme.tenant_id, "Follow-up of Big").await,
        0
    );
    let logs = app
        .send(get(&format!("{LOGS}?entityType=customers.deal"), &admin))
        .await
        .json();
    let done = &logs["items"][0]["outputContext"]["actionsExecuted"][0];
    assert_eq!(done["success"], false, "{logs}");
}

#[actix_web::test]
async fn saving_checks_the_operation_the_key_and_api_keys_create() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let other = seed(&app.db, "Other Inc", "other.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let admin_role = role(&app.db, acme.tenant_id, "admin").await;
    let key = api_key(&app.db, &acme, "rules", &[admin_role]).await;
    let other_role = role(&app.db, other.tenant_id, "admin").await;
    let foreign = api_key(&app.db, &other, "theirs", &[other_role]).await;
    let roleless = api_key(&app.db, &acme, "empty", &[]).await;

    let refused = |body: Value, path: &'static str| {
        let app = &app;
        let admin = admin.clone();
        async move {
            let res = app.send(post_json(RULES, &admin, body)).await;
            assert_eq!(res.status, 400, "{}", res.text());
            assert!(res.text().contains(path), "{path}: {}", res.text());
        }
    };
    let mut body = follow_up(key);
    body["successActions"][0]["config"]["endpoint"] = json!("/api/customers/deals/{id}");
    refused(body, "endpoint").await;
    let mut body = follow_up(key);
    body["successActions"][0]["config"]["method"] = json!("PATCH");
    refused(body, "endpoint").await;
    let mut body = follow_up(key);
    body["successActions"][0]["config"]["apiKeyId"] = json!("not-a-uuid");
    refused(body, "apiKeyId").await;
    refused(follow_up(foreign), "API key is not available").await;
    refused(follow_up(roleless), "API key has no roles").await;
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM business_rules").await,
        0
    );

    // Without api_keys.create: 403, for new rules and for rules that call.
    let manager = user_with_features(
        &app.db,
        &acme,
        "manager@acme.com",
        &["business_rules.*", "customers.*"],
        None,
        Some(acme.organization_id),
    )
    .await;
    let manager = token_for(&app.db, manager).await;
    let res = app.send(post_json(RULES, &manager, follow_up(key))).await;
    assert_eq!(res.status, 403, "{}", res.text());
    let id = rule(&app, &admin, follow_up(key)).await;
    let res = app
        .send(put_json(
            RULES,
            &manager,
            json!({"id": id, "ruleName": "Renamed"}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
}

#[actix_web::test]
async fn call_options_list_the_tenants_live_keys_without_secrets() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let other = seed(&app.db, "Other Inc", "other.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let admin_role = role(&app.db, acme.tenant_id, "admin").await;
    let key = api_key(&app.db, &acme, "rules", &[admin_role]).await;
    let gone = api_key(&app.db, &acme, "gone", &[admin_role]).await;
    count(
        &app.db,
        &format!("WITH d AS (UPDATE api_keys SET expires_at = now() - interval '1 day' WHERE id = '{gone}' RETURNING 1) SELECT count(*) AS n FROM d"),
    )
    .await;
    let other_role = role(&app.db, other.tenant_id, "admin").await;
    api_key(&app.db, &other, "theirs", &[other_role]).await;
    let res = app.send(get(OPTIONS, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    let keys = body["apiKeys"].as_array().unwrap();
    assert_eq!(keys.len(), 1, "{body}");
    assert_eq!(keys[0]["id"], json!(key));
    assert_eq!(keys[0]["name"], "rules");
    assert!(keys[0]["keyPrefix"].as_str().unwrap().starts_with("omk_"));
    assert_eq!(keys[0]["organizationId"], json!(acme.organization_id));
    assert_eq!(
        keys[0]["roles"],
        json!([{"id": admin_role, "name": "admin"}])
    );
    assert!(!res.text().contains(&"0".repeat(64)));
    assert!(
        body["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["id"] == "POST /api/customers/deals")
    );
}
