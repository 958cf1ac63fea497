//! Rules, sets and members: every status, partial updates, filters, tenant
//! isolation, organization scope, missing features, undo.

use actix_web::test::TestRequest;
use serde_json::json;

use super::support::*;

fn in_org(req: TestRequest, org: uuid::Uuid) -> TestRequest {
    req.insert_header(("x-om-selected-org", org.to_string()))
}

#[actix_web::test]
async fn rules_are_created_read_updated_partially_listed_and_deleted() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let condition = json!({"operator": "AND", "rules": [
        {"field": "valueAmount", "operator": ">", "value": 1000},
        {"field": "status", "operator": "IN", "value": ["open", "won"]},
    ]});
    let id = rule(
        &app,
        &admin,
        json!({
            "ruleId": "big-deals", "ruleName": "Big deals", "ruleType": "GUARD",
            "entityType": "customers.deal", "eventType": "updated", "priority": 500,
            "version": 3, "enabled": true, "conditionExpression": condition,
            "successActions": [{"type": "LOG", "config": {"message": "big {{data.title}}"}}],
            "effectiveFrom": "2026-01-01", "effectiveTo": "2099-01-01T00:00:00Z",
        }),
    )
    .await;
    let res = app.send(get(&format!("{RULES}/{id}"), &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ruleId"], "big-deals");
    assert_eq!(body["priority"], 500);
    assert_eq!(body["conditionExpression"], condition);
    assert_eq!(body["effectiveFrom"], "2026-01-01T00:00:00.000Z");
    assert_eq!(body["tenantId"], acme.tenant_id.to_string());

    // Partial update: only the name changes; priority, version, enabled stay.
    let res = app
        .send(put_json(
            RULES,
            &admin,
            json!({"id": id, "ruleName": "Renamed"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["ok"], true);
    let body = app.send(get(&format!("{RULES}/{id}"), &admin)).await.json();
    assert_eq!(body["ruleName"], "Renamed");
    assert_eq!(body["priority"], 500);
    assert_eq!(body["version"], 3);
    assert_eq!(body["enabled"], true);
    assert_eq!(body["conditionExpression"], condition);

    // A disabled rule, and the enabled filter both ways.
    rule(&app, &admin, json!({"ruleId": "off", "enabled": false})).await;
    let list = app
        .send(get(&format!("{RULES}?enabled=false"), &admin))
        .await
        .json();
    assert_eq!(list["total"], 1, "{list}");
    assert_eq!(list["items"][0]["ruleId"], "off");
    let list = app
        .send(get(&format!("{RULES}?enabled=true"), &admin))
        .await
        .json();
    assert_eq!(list["total"], 1);
    let list = app
        .send(get(
            &format!("{RULES}?search=renam&sortField=ruleId&sortDir=asc"),
            &admin,
        ))
        .await
        .json();
    assert_eq!(list["total"], 1);
    assert_eq!(list["items"][0]["ruleName"], "Renamed");
    let list = app.send(get(RULES, &admin)).await.json();
    assert_eq!(list["total"], 2);
    assert_eq!(list["totalPages"], 1);
    assert_eq!(
        list["items"][0]["ruleId"], "big-deals",
        "priority desc first"
    );

    // Bad queries.
    for q in [
        "pageSize=0",
        "ruleType=NOPE",
        "sortField=nope",
        "enabled=maybe",
    ] {
        let res = app.send(get(&format!("{RULES}?{q}"), &admin)).await;
        assert_eq!(res.status, 400, "{q}: {}", res.text());
    }

    // Delete, then it is gone.
    let res = app.send(delete(&format!("{RULES}?id={id}"), &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        app.send(get(&format!("{RULES}/{id}"), &admin)).await.status,
        404
    );
    assert_eq!(
        app.send(delete(&format!("{RULES}?id={id}"), &admin))
            .await
            .status,
        404
    );
    assert_eq!(
        app.send(delete(RULES, &admin)).await.json()["error"],
        "Rule id is required"
    );
    assert_eq!(
        app.send(get(&format!("{RULES}/not-a-uuid"), &admin))
            .await
            .json()["error"],
        "Invalid rule id"
    );
    let res = app
        .send(put_json(RULES, &admin, json!({"ruleName": "x"})))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "Rule id is required");
}

#[actix_web::test]
async fn bad_rules_are_refused_naming_the_path_and_nothing_is_saved() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let base = json!({"ruleId": "x", "ruleName": "X", "ruleType": "GUARD", "entityType": "customers.deal"});
    let cases = [
        (
            json!({"conditionExpression": {"field": "valueAmount", "operator": "LIKE", "value": 1}}),
            "conditionExpression.operator: Invalid condition expression: unknown operator 'LIKE'",
        ),
        (
            json!({"conditionExpression": {"field": "salary", "operator": "=", "value": 1}}),
            "conditionExpression.field: Invalid condition expression: unknown field 'salary'",
        ),
        (
            json!({"conditionExpression": {"operator": "AND", "rules": []}}),
            "conditionExpression.rules: Invalid condition expression: a group needs at least one rule",
        ),
        (
            json!({"conditionExpression": {"operator": "OR", "rules": [{"field": "title", "operator": "MATCHES", "value": "(("}]}}),
            "conditionExpression.rules.0.value: Invalid condition expression: invalid regular expression",
        ),
        (
            json!({"successActions": [{"type": "EXPLODE"}]}),
            "successActions.0.type: unknown action type 'EXPLODE'",
        ),
        (
            json!({"failureActions": [{"type": "LOG"}]}),
            "failureActions.0.config.message: is required",
        ),
        (
            json!({"successActions": [{"type": "CALL_WEBHOOK", "config": {"url": "http://10.0.0.7/hook"}}]}),
            "successActions.0.config.url: address not allowed",
        ),
        (
            json!({"successActions": [{"type": "CALL_WEBHOOK", "config": {"url": "http://169.254.169.254/latest"}}]}),
            "successActions.0.config.url: address not allowed",
        ),
        (
            json!({"successActions": [{"type": "CALL_WEBHOOK", "config": {"url": "http://127.0.0.2:9/x"}}]}),
            "successActions.0.config.url: address not allowed",
        ),
        (
            json!({"successActions": [{"type": "SET_FIELD", "config": {"field": "salary", "value": 1}}]}),
            "successActions.0.config.field: is not a writable field of customers.deal",
        ),
        (
            json!({"successActions": [{"type": "SET_FIELD", "config": {"field": "data.status", "value": "won"}}]}),
            "successActions.0.config.field: must be a top-level field name",
        ),
        (
            json!({"successActions": [{"type": "LOG", "config": {"message": "m"}}, {"type": "SET_FIELD", "config": {"field": "probability", "value": 400}}]}),
            "successActions.1.config.value: is not a valid value",
        ),
        (
            json!({"failureActions": [{"type": "SET_FIELD", "config": {"field": "pipelineStageId", "value": "stage two"}}]}),
            "failureActions.0.config.value: is not a valid value",
        ),
        (
            json!({"successActions": [{"type": "SET_FIELD", "config": {"field": "status"}}]}),
            "successActions.0.config.value: is required",
        ),
        (
            json!({"entityType": "test.thing", "successActions": [{"type": "SET_FIELD", "config": {"field": "status", "value": "won"}}]}),
            "successActions.0.config.field: entity type test.thing has no fields rules may write",
        ),
        (
            json!({"effectiveFrom": "2026-02-01", "effectiveTo": "2026-01-01"}),
            "effectiveTo: must be after effectiveFrom",
        ),
        (
            json!({"effectiveFrom": "someday"}),
            "effectiveFrom: must be a date",
        ),
        (
            json!({"conditionExpression": {"field": "title", "operator": "=", "value": "x".repeat(70_000)}}),
            "conditionExpression: Condition expression exceeds safety limits: larger than 64 KiB",
        ),
        (
            json!({"conditionExpression": deep_condition(6)}),
            "conditionExpression.rules.0.rules.0.rules.0.rules.0.rules.0: Condition expression exceeds safety limits: groups may be nested at most 5 deep",
        ),
        (
            json!({"conditionExpression": {"operator": "OR", "rules": vec![json!({"field": "title", "operator": "=", "value": 1}); 51]}}),
            "conditionExpression.rules: Condition expression exceeds safety limits: a group holds at most 50 rules",
        ),
        (
            json!({"conditionExpression": {"field": format!("title.{}", "a".repeat(200)), "operator": "=", "value": 1}}),
            "conditionExpression.field: Condition expression exceeds safety limits: field path is longer than 200 characters",
        ),
        (
            json!({"conditionExpression": {"field": "title", "operator": "MATCHES", "value": "a".repeat(201)}}),
            "conditionExpression.value: Condition expression exceeds safety limits: pattern is longer than 200 characters",
        ),
        (json!({"priority": 10000}), "priority"),
        (json!({"ruleType": "MAGIC"}), "ruleType"),
        (json!({"ruleId": ""}), "ruleId"),
    ];
    for (extra, expected) in cases {
        let mut body = base.clone();
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let res = app.send(post_json(RULES, &admin, body)).await;
        assert_eq!(res.status, 400, "{extra}: {}", res.text());
        // The rule checks name the path in the message (shape G); the body's
        // own field checks name it in the issues (the server renders both
        // as `Validation failed: <path>: ...`, the shape the operation declares).
        let text = res.text();
        assert!(text.contains(expected), "{expected} not in {text}");
        if expected.contains(':') {
            let error = res.json()["error"].as_str().unwrap().to_string();
            assert!(error.starts_with("Validation failed: "), "{error}");
        }
    }
    let res = app
        .send(
            TestRequest::post()
                .uri(RULES)
                .insert_header(("authorization", format!("Bearer {admin}")))
                .insert_header(("content-type", "application/json"))
                .set_payload("{not json"),
        )
        .await;
    assert_eq!(res.status, 400, "a body that is not JSON");
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM business_rules").await,
        0
    );

    // An update with a bad condition leaves the rule as it was.
    let id = rule(&app, &admin, json!({"entityType": "customers.deal"})).await;
    let res = app
        .send(put_json(RULES, &admin, json!({"id": id, "ruleName": "New", "conditionExpression": {"field": "nope", "operator": "=", "value": 1}})))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(
        app.send(get(&format!("{RULES}/{id}"), &admin)).await.json()["ruleName"],
        "Rule one"
    );

    // Duplicate rule id in the tenant: 409.
    let res = app
        .send(post_json(
            RULES,
            &admin,
            json!({"ruleId": "r1", "ruleName": "Again", "ruleType": "ACTION", "entityType": "x.y"}),
        ))
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
}

#[actix_web::test]
async fn another_tenant_and_missing_features_are_refused() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let intruder = token_for(&app.db, globex.admin).await;
    let id = rule(&app, &admin, json!({})).await;
    let set = id_of(
        &app.send(post_json(
            SETS,
            &admin,
            json!({"setId": "s", "setName": "S"}),
        ))
        .await
        .json(),
    );
    for req in [
        get(&format!("{RULES}/{id}"), &intruder),
        put_json(RULES, &intruder, json!({"id": id, "ruleName": "Mine"})),
        delete(&format!("{RULES}?id={id}"), &intruder),
        get(&format!("{SETS}/{set}"), &intruder),
        put_json(SETS, &intruder, json!({"id": set, "setName": "Mine"})),
        delete(&format!("{SETS}?id={set}"), &intruder),
        post_json(
            &format!("{SETS}/{set}/members"),
            &intruder,
            json!({"ruleId": id}),
        ),
        post_json(&format!("{EXECUTE}/{id}"), &intruder, json!({})),
    ] {
        let res = app.send(req).await;
        assert_eq!(res.status, 404, "{}", res.text());
    }
    assert_eq!(app.send(get(RULES, &intruder)).await.json()["total"], 0);
    assert_eq!(app.send(get(SETS, &intruder)).await.json()["total"], 0);

    // The employee holds no business-rules feature (the reference's grants).
    let employee = token_for(&app.db, acme.employee).await;
    for req in [
        get(RULES, &employee),
        post_json(
            RULES,
            &employee,
            json!({"ruleId": "e", "ruleName": "E", "ruleType": "ACTION", "entityType": "x.y"}),
        ),
        get(SETS, &employee),
        post_json(EXECUTE, &employee, json!({"entityType": "x.y"})),
        get(LOGS, &employee),
        get("/api/business_rules/platform-call-options", &employee),
    ] {
        assert_eq!(app.send(req).await.status, 403);
    }
    // A viewer cannot write.
    let viewer = user_with_features(
        &app.db,
        &acme,
        "v@acme.com",
        &["business_rules.view"],
        None,
        None,
    )
    .await;
    let viewer = token_for(&app.db, viewer).await;
    assert_eq!(app.send(get(RULES, &viewer)).await.status, 200);
    let res = app
        .send(put_json(
            RULES,
            &viewer,
            json!({"id": id, "ruleName": "No"}),
        ))
        .await;
    assert_eq!(res.status, 403);
    // Rules about deals also need the deals' feature.
    let rules_only = user_with_features(
        &app.db,
        &acme,
        "r@acme.com",
        &["business_rules.*"],
        None,
        None,
    )
    .await;
    let rules_only = token_for(&app.db, rules_only).await;
    let res = app
        .send(post_json(RULES, &rules_only, json!({"ruleId": "d", "ruleName": "D", "ruleType": "GUARD", "entityType": "customers.deal"})))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
}

#[actix_web::test]
async fn an_admin_limited_to_one_organization_reaches_only_its_rules() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let north =
        stoa_auth::testing::organization(&app.db, acme.tenant_id, acme.organization_id, "North")
            .await;
    let south =
        stoa_auth::testing::organization(&app.db, acme.tenant_id, acme.organization_id, "South")
            .await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(in_org(post_json(RULES, &admin, json!({"ruleId": "s", "ruleName": "South", "ruleType": "ACTION", "entityType": "x.y"})), south))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let south_rule = id_of(&res.json());
    let limited = user_with_features(
        &app.db,
        &acme,
        "north@acme.com",
        &["business_rules.*"],
        Some(vec![north]),
        Some(north),
    )
    .await;
    let limited = token_for(&app.db, limited).await;
    assert_eq!(
        app.send(get(&format!("{RULES}/{south_rule}"), &limited))
            .await
            .status,
        404
    );
    assert_eq!(app.send(get(RULES, &limited)).await.json()["total"], 0);
    let res = app
        .send(put_json(
            RULES,
            &limited,
            json!({"id": south_rule, "ruleName": "Mine"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    // Selecting an organization outside its grant is refused.
    let res = app
        .send(in_org(
            post_json(
                RULES,
                &limited,
                json!({"ruleId": "n", "ruleName": "N", "ruleType": "ACTION", "entityType": "x.y"}),
            ),
            south,
        ))
        .await;
    assert_eq!(res.status, 422, "{}", res.text());
    let res = app
        .send(post_json(
            RULES,
            &limited,
            json!({"ruleId": "n", "ruleName": "N", "ruleType": "ACTION", "entityType": "x.y"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
}

#[actix_web::test]
async fn sets_and_members_have_every_status() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let r1 = rule(&app, &admin, json!({"ruleId": "a"})).await;
    let r2 = rule(&app, &admin, json!({"ruleId": "b", "ruleName": "Bee"})).await;
    let res = app
        .send(post_json(
            SETS,
            &admin,
            json!({"setId": "pricing", "setName": "Pricing", "description": "d"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let set = id_of(&res.json());
    let res = app
        .send(post_json(
            SETS,
            &admin,
            json!({"setId": "pricing", "setName": "Again"}),
        ))
        .await;
    assert_eq!(res.status, 409);
    let res = app
        .send(post_json(SETS, &admin, json!({"setName": "No id"})))
        .await;
    assert_eq!(res.status, 400);
    assert!(res.text().contains("setId"), "{}", res.text());

    let members = format!("{SETS}/{set}/members");
    let res = app
        .send(post_json(
            &members,
            &admin,
            json!({"ruleId": r2, "sequence": 2}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let m2 = id_of(&res.json());
    let res = app
        .send(post_json(
            &members,
            &admin,
            json!({"ruleId": r1, "sequence": 1}),
        ))
        .await;
    assert_eq!(res.status, 201);
    assert_eq!(
        app.send(post_json(&members, &admin, json!({"ruleId": r1})))
            .await
            .status,
        409
    );
    let res = app
        .send(post_json(
            &members,
            &admin,
            json!({"ruleId": uuid::Uuid::new_v4()}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "Rule not found");
    let missing = format!("{SETS}/{}/members", uuid::Uuid::new_v4());
    let res = app
        .send(post_json(&missing, &admin, json!({"ruleId": r1})))
        .await;
    assert_eq!(res.json()["error"], "Rule set not found");
    assert_eq!(
        app.send(post_json(&members, &admin, json!({"sequence": -1})))
            .await
            .status,
        400
    );

    let detail = app.send(get(&format!("{SETS}/{set}"), &admin)).await.json();
    assert_eq!(detail["setId"], "pricing");
    let order: Vec<_> = detail["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["ruleId"].clone())
        .collect();
    assert_eq!(order, [json!(r1), json!(r2)]);
    assert_eq!(detail["members"][1]["ruleName"], "Bee");

    let res = app
        .send(put_json(
            &members,
            &admin,
            json!({"memberId": m2, "sequence": 0, "enabled": false}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let detail = app.send(get(&format!("{SETS}/{set}"), &admin)).await.json();
    assert_eq!(detail["members"][0]["ruleId"], json!(r2));
    assert_eq!(detail["members"][0]["enabled"], false);
    let res = app
        .send(put_json(
            &members,
            &admin,
            json!({"memberId": uuid::Uuid::new_v4()}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "Member not found");

    assert_eq!(
        app.send(delete(&members, &admin)).await.json()["error"],
        "Member id is required"
    );
    assert_eq!(
        app.send(delete(&format!("{members}?memberId={m2}"), &admin))
            .await
            .status,
        200
    );
    assert_eq!(
        app.send(delete(&format!("{members}?memberId={m2}"), &admin))
            .await
            .status,
        404
    );

    // Set update keeps omitted fields; enabled=false filters disabled sets.
    let res = app
        .send(put_json(SETS, &admin, json!({"id": set, "enabled": false})))
        .await;
    assert_eq!(res.status, 200);
    let detail = app.send(get(&format!("{SETS}/{set}"), &admin)).await.json();
    assert_eq!(
        (
            detail["setName"].clone(),
            detail["description"].clone(),
            detail["enabled"].clone()
        ),
        (json!("Pricing"), json!("d"), json!(false))
    );
    assert_eq!(
        app.send(get(&format!("{SETS}?enabled=false"), &admin))
            .await
            .json()["total"],
        1
    );
    assert_eq!(
        app.send(get(&format!("{SETS}?enabled=true"), &admin))
            .await
            .json()["total"],
        0
    );
    assert_eq!(
        app.send(get(&format!("{SETS}/nope"), &admin)).await.json()["error"],
        "Invalid rule set id"
    );
    assert_eq!(
        app.send(put_json(SETS, &admin, json!({"setName": "x"})))
            .await
            .json()["error"],
        "Rule set id is required"
    );
    assert_eq!(
        app.send(delete(&format!("{SETS}?id={set}"), &admin))
            .await
            .status,
        200
    );
    assert_eq!(
        app.send(get(&format!("{SETS}/{set}"), &admin)).await.status,
        404
    );
}

#[actix_web::test]
async fn a_rule_change_is_undone_through_the_audit_log() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = rule(&app, &admin, json!({"priority": 7})).await;
    let res = app
        .send(put_json(RULES, &admin, json!({"id": id, "priority": 9})))
        .await;
    assert_eq!(res.status, 200);
    let token = res.operation().unwrap().undo_token.unwrap();
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/undo",
            &admin,
            json!({"undoToken": token}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        app.send(get(&format!("{RULES}/{id}"), &admin)).await.json()["priority"],
        7
    );
}

/// Undo is a write like any other: bringing back a deleted rule checks its
/// content for the caller of the undo, now. A rules manager who may not
/// read deals cannot restore a rule that watches them, even through the
/// audit log's undo of someone else's delete.
#[actix_web::test]
async fn an_undo_cannot_restore_a_rule_its_caller_could_not_write() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = rule(
        &app,
        &admin,
        json!({"ruleId": "deals", "entityType": "customers.deal"}),
    )
    .await;
    let res = app.send(delete(&format!("{RULES}?id={id}"), &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let token = res.operation().unwrap().undo_token.unwrap();
    let manager = user_with_features(
        &app.db,
        &acme,
        "rules@acme.com",
        &[
            "business_rules.manage",
            "business_rules.view",
            "audit_logs.*",
        ],
        None,
        None,
    )
    .await;
    let manager = token_for(&app.db, manager).await;
    let undo = |who: &str| {
        post_json(
            "/api/audit_logs/audit-logs/actions/undo",
            who,
            json!({"undoToken": token}),
        )
    };
    let res = app.send(undo(&manager)).await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(
        app.send(get(&format!("{RULES}/{id}"), &admin)).await.status,
        404,
        "the refused undo restored nothing"
    );
    // The admin, who reads deals, may.
    let res = app.send(undo(&admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        app.send(get(&format!("{RULES}/{id}"), &admin)).await.status,
        200
    );
}

#[actix_web::test]
async fn platform_call_options_list_the_declared_operations() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(get("/api/business_rules/platform-call-options", &admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let endpoints = res.json()["endpoints"].as_array().unwrap().clone();
    let list = endpoints
        .iter()
        .find(|e| e["id"] == "GET /api/business_rules/rules")
        .unwrap();
    assert_eq!(list["requiredFeatures"], json!(["business_rules.view"]));
    assert!(
        endpoints
            .iter()
            .all(|e| !e["path"].as_str().unwrap().contains('{'))
    );
    assert!(
        !endpoints
            .iter()
            .any(|e| e["path"] == "/api/business_rules/platform-call-options")
    );
    let rules_only = user_with_features(
        &app.db,
        &acme,
        "m@acme.com",
        &["business_rules.manage"],
        None,
        None,
    )
    .await;
    let rules_only = token_for(&app.db, rules_only).await;
    let res = app
        .send(get(
            "/api/business_rules/platform-call-options",
            &rules_only,
        ))
        .await;
    assert_eq!(res.status, 403, "api_keys.create is required too");
}

#[actix_web::test]
async fn lists_cost_the_same_statements_whatever_their_length() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    rule(
        &app,
        &admin,
        json!({"ruleId": "first", "entityType": "crm.deal"}),
    )
    .await;
    app.send(post_json(
        SETS,
        &admin,
        json!({"setId": "s0", "setName": "S0"}),
    ))
    .await;
    app.send(post_json(
        EXECUTE,
        &admin,
        json!({"entityType": "crm.deal"}),
    ))
    .await;
    let paths = [RULES.to_string(), SETS.to_string(), LOGS.to_string()];
    // Pages are kept answers: each measured read asks a page not read
    // before (another `pageSize`), so it runs its statement.
    let mut few = Vec::new();
    for path in &paths {
        app.statements(path, &admin).await;
        few.push(
            app.statements(&format!("{path}?pageSize=50"), &admin)
                .await
                .0,
        );
    }
    for i in 0..20 {
        rule(
            &app,
            &admin,
            json!({"ruleId": format!("more-{i}"), "entityType": "crm.deal"}),
        )
        .await;
        app.send(post_json(
            SETS,
            &admin,
            json!({"setId": format!("s{}", i + 1), "setName": "S"}),
        ))
        .await;
    }
    app.send(post_json(
        EXECUTE,
        &admin,
        json!({"entityType": "crm.deal"}),
    ))
    .await;
    for (path, before) in paths.iter().zip(few) {
        let (n, body) = app.statements(&format!("{path}?pageSize=49"), &admin).await;
        assert!(body["total"].as_i64().unwrap() >= 20, "{body}");
        assert_eq!(n, before, "{path}: one statement more per row?");
        assert!(n <= 4, "{path}: {n} statements");
    }
}

#[actix_web::test]
async fn platform_call_options_carry_summaries_and_operation_ids_of_the_openapi_document() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let doc = app
        .send(TestRequest::get().uri("/api/docs/openapi.json"))
        .await;
    assert_eq!(doc.status, 200);
    let doc = doc.json();
    let res = app
        .send(get("/api/business_rules/platform-call-options", &admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let endpoints = res.json()["endpoints"].as_array().unwrap().clone();
    assert!(!endpoints.is_empty());
    for e in &endpoints {
        let path = e["path"].as_str().unwrap();
        let method = e["method"].as_str().unwrap().to_ascii_lowercase();
        let op = &doc["paths"][path][&method];
        assert!(op.is_object(), "{method} {path} is not in the document");
        assert_eq!(e["operationId"], op["operationId"], "{method} {path}");
        assert_eq!(e["summary"], op["summary"], "{method} {path}");
        let label = match e["summary"].as_str() {
            Some(s) => format!("{} - {s}", e["id"].as_str().unwrap()),
            None => e["id"].as_str().unwrap().to_string(),
        };
        assert_eq!(e["label"], label);
    }
    let list = endpoints
        .iter()
        .find(|e| e["id"] == "GET /api/business_rules/rules")
        .unwrap();
    assert_eq!(list["operationId"], "list_rules");
    assert_eq!(
        list["summary"],
        "Rules of the caller's tenant in the organizations it sees."
    );
    assert_eq!(
        list["label"],
        "GET /api/business_rules/rules - Rules of the caller's tenant in the organizations it sees."
    );
    assert!(
        endpoints
            .iter()
            .filter(|e| e["operationId"].is_string())
            .count()
            == endpoints.len(),
        "every listed operation is documented"
    );
}

/// A comparison inside `depth` nested AND groups.
fn deep_condition(depth: usize) -> serde_json::Value {
    let mut condition = json!({"field": "title", "operator": "=", "value": 1});
    for _ in 0..depth {
        condition = json!({"operator": "AND", "rules": [condition]});
    }
    condition
}
