//! The rule and set lists on `stoa_core::list`: capped totals, keyset
//! cursors in every order, cursors of another list refused.

use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn rule_and_set_lists_page_by_cursor_without_overlap() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    // Two share a priority: the tie goes to ruleId.
    for (id, priority) in [("b", 100), ("a", 100), ("c", 900)] {
        rule(&app, &admin, json!({"ruleId": id, "priority": priority})).await;
        app.send(post_json(
            SETS,
            &admin,
            json!({"setId": format!("set-{id}"), "setName": id}),
        ))
        .await;
    }
    for (path, expected) in [
        (format!("{RULES}?pageSize=2"), ["c", "a", "b"]),
        (
            format!("{RULES}?pageSize=2&sortField=ruleId&sortDir=desc"),
            ["c", "b", "a"],
        ),
        (format!("{SETS}?pageSize=2"), ["set-a", "set-b", "set-c"]),
    ] {
        let key = if path.starts_with(RULES) {
            "ruleId"
        } else {
            "setId"
        };
        let first = app.send(get(&path, &admin)).await.json();
        assert_eq!(
            (&first["total"], &first["totalPages"], &first["totalCapped"]),
            (&json!(3), &json!(2), &json!(false)),
            "{first}"
        );
        let cursor = first["nextCursor"].as_str().unwrap().to_string();
        let next = app
            .send(get(&format!("{path}&cursor={cursor}"), &admin))
            .await
            .json();
        let seen: Vec<_> = first["items"]
            .as_array()
            .unwrap()
            .iter()
            .chain(next["items"].as_array().unwrap())
            .map(|i| i[key].clone())
            .collect();
        assert_eq!(seen, expected.map(|e| json!(e)), "{path}: {next}");
        assert_eq!(next["page"], 2);
        assert!(next.get("nextCursor").is_none(), "{next}");
        // A cursor of another list or order is 400.
        let res = app
            .send(get(&format!("{LOGS}?cursor={cursor}"), &admin))
            .await;
        assert_eq!(res.status, 400, "{}", res.text());
    }
    let exact = app
        .send(get(&format!("{RULES}?includeTotal=false"), &admin))
        .await
        .json();
    assert_eq!(exact["items"].as_array().unwrap().len(), 3, "{exact}");
}

#[actix_web::test]
async fn rule_log_and_set_pages_are_kept_until_they_change() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    rule(&app, &admin, json!({"ruleId": "first", "priority": 1})).await;
    let page = format!("{RULES}?pageSize=10");
    // Warm the ACL cache, then read the page twice: the second is the
    // session check alone, with the same body.
    app.send(get(&page, &admin)).await;
    let (_, first) = app.statements(&page, &admin).await;
    let (n, again) = app.statements(&page, &admin).await;
    assert_eq!((n, &again), (1, &first), "a kept rule page");
    rule(&app, &admin, json!({"ruleId": "second", "priority": 2})).await;
    let (n, after) = app.statements(&page, &admin).await;
    assert!(n > 1, "recomputed after a new rule ({n} statements)");
    assert_eq!(after["items"][0]["ruleId"], "second", "{after}");

    // The log list: kept, and read again once a log of the tenant is written.
    let rule_id = after["items"][0]["id"].as_str().unwrap().to_string();
    let logs = format!("{LOGS}?pageSize=10");
    let log = |entity: &str| {
        format!(
            "INSERT INTO business_rule_logs (rule_id, tenant_id, organization_id, entity_id, \
               entity_type, execution_result, execution_time_ms, executed_by) \
             VALUES ('{rule_id}', '{t}', '{o}', '{entity}', 'customers.deal', 'SUCCESS', 1, 'test')",
            t = acme.tenant_id,
            o = acme.organization_id,
        )
    };
    stoa_testkit::sql(&app.db, &log("deal-1")).await;
    let (_, first) = app.statements(&logs, &admin).await;
    assert_eq!(first["total"], 1, "{first}");
    let (n, _) = app.statements(&logs, &admin).await;
    assert_eq!(n, 1, "a kept log page");
    stoa_testkit::sql(&app.db, &log("deal-2")).await;
    let (_, after) = app.statements(&logs, &admin).await;
    assert_eq!(after["total"], 2, "a new log is seen: {after}");
    assert_eq!(after["items"][0]["ruleName"], first["items"][0]["ruleName"]);

    // The set list: kept, and read again once a set changes.
    app.send(post_json(
        SETS,
        &admin,
        json!({"setId": "set-1", "setName": "One"}),
    ))
    .await;
    let sets = format!("{SETS}?pageSize=10");
    let (_, first) = app.statements(&sets, &admin).await;
    let (n, again) = app.statements(&sets, &admin).await;
    assert_eq!((n, &again), (1, &first), "a kept set page");
    app.send(post_json(
        SETS,
        &admin,
        json!({"setId": "set-2", "setName": "Two"}),
    ))
    .await;
    let (_, after) = app.statements(&sets, &admin).await;
    assert_eq!(after["total"], 2, "a new set is seen: {after}");
}
