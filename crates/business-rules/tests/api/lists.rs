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
