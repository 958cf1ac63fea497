//! Conversations: idempotent create, cursor paging, access, soft delete,
//! import with known client message ids skipped, tenant isolation.

use serde_json::json;

use super::support::*;

const CONVERSATIONS: &str = "/api/ai_assistant/ai/conversations";

#[actix_web::test]
async fn conversations_are_created_once_paged_and_soft_deleted() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    let body =
        json!({"agentId": "customers.deal_analyzer", "conversationId": "c-1", "title": "First"});
    let res = app
        .send(post_json(CONVERSATIONS, &employee, body.clone()))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(res.json()["isOwner"], true);
    let res = app
        .send(post_json(CONVERSATIONS, &employee, body.clone()))
        .await;
    assert_eq!(res.status, 200);
    // Another user's conversation of that id does not exist for this caller.
    let other = user_with_features(
        &app.db,
        &acme,
        "o@acme.com",
        &["ai_assistant.view"],
        None,
        None,
    )
    .await;
    let other = token_for(&app.db, other).await;
    let res = app.send(post_json(CONVERSATIONS, &other, body)).await;
    assert_eq!(res.status, 404);
    assert_eq!(
        app.send(get(&format!("{CONVERSATIONS}/c-1"), &other))
            .await
            .status,
        404
    );

    for n in 2..=3 {
        let res = app
            .send(post_json(
                CONVERSATIONS,
                &employee,
                json!({"agentId": "customers.deal_analyzer", "conversationId": format!("c-{n}")}),
            ))
            .await;
        assert_eq!(res.status, 201);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let res = app
        .send(get(&format!("{CONVERSATIONS}?limit=2"), &employee))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let page = res.json();
    let ids: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["conversationId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c-3", "c-2"]);
    let cursor = page["nextCursor"].as_str().unwrap().to_string();
    let res = app
        .send(get(
            &format!(
                "{CONVERSATIONS}?limit=2&cursor={}",
                cursor.replace('+', "%2B")
            ),
            &employee,
        ))
        .await;
    let ids: Vec<String> = res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["conversationId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["c-1"]);
    assert_eq!(res.json()["nextCursor"], json!(null));
    assert_eq!(
        app.send(get(&format!("{CONVERSATIONS}?cursor=yesterday"), &employee))
            .await
            .status,
        400
    );

    // The other user sees none; a manager sees all of the organization.
    let res = app.send(get(CONVERSATIONS, &other)).await;
    assert_eq!(res.json()["items"], json!([]));
    let res = app.send(get(CONVERSATIONS, &admin)).await;
    assert_eq!(res.json()["items"].as_array().unwrap().len(), 3);

    let res = app
        .send(stoa_testkit::requests::patch_json(
            &format!("{CONVERSATIONS}/c-1"),
            &employee,
            json!({"title": "Renamed", "status": "closed"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["title"], "Renamed");
    let res = app
        .send(stoa_testkit::requests::patch_json(
            &format!("{CONVERSATIONS}/c-1"),
            &employee,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 400);

    let res = app
        .send(delete(&format!("{CONVERSATIONS}/c-1"), &employee))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(
        app.send(get(&format!("{CONVERSATIONS}/c-1"), &employee))
            .await
            .status,
        404
    );
    assert_eq!(
        app.send(delete(&format!("{CONVERSATIONS}/c-1"), &employee))
            .await
            .status,
        404
    );

    let globex = seed(&app.db, "Globex", "globex.com").await;
    let globex = token_for(&app.db, globex.admin).await;
    let res = app.send(get(CONVERSATIONS, &globex)).await;
    assert_eq!(res.json()["items"], json!([]));
    assert_eq!(
        app.send(get(&format!("{CONVERSATIONS}/c-2"), &globex))
            .await
            .status,
        404
    );
}

#[actix_web::test]
async fn import_skips_known_client_message_ids() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let url = format!("{CONVERSATIONS}/import");
    let body = |ids: &[Option<&str>]| {
        json!({
            "conversation": {"conversationId": "local-1", "agentId": "customers.deal_analyzer", "title": "Local"},
            "messages": ids.iter().map(|id| json!({"clientMessageId": id, "role": "user", "content": "hi"})).collect::<Vec<_>>(),
        })
    };
    let res = app
        .send(post_json(
            &url,
            &admin,
            body(&[Some("m1"), Some("m2"), None]),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["importedMessageCount"], 2);
    assert_eq!(res.json()["skippedMessageCount"], 1);
    let res = app
        .send(post_json(&url, &admin, body(&[Some("m2"), Some("m3")])))
        .await;
    assert_eq!(res.json()["importedMessageCount"], 1);
    assert_eq!(res.json()["skippedMessageCount"], 1);
    let res = app
        .send(get(&format!("{CONVERSATIONS}/local-1"), &admin))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["messages"].as_array().unwrap().len(), 3);
    assert!(res.json()["conversation"]["importedFromLocalAt"].is_string());

    let many: Vec<Option<&str>> = vec![None; 101];
    let res = app.send(post_json(&url, &admin, body(&many))).await;
    assert_eq!(res.status, 400);
}

/// Issue 50: the cursor is a time as the list writes it (milliseconds), so
/// pages end between milliseconds: conversations sharing the millisecond of
/// a page's end are neither skipped nor repeated; a cursor with the
/// microseconds older answers carried still pages exactly.
#[actix_web::test]
async fn cursors_page_exactly_through_conversations_in_one_millisecond() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let employee = token_for(&app.db, acme.employee).await;
    let at = [
        ("c-1", "2026-01-01T00:00:00.100100Z"),
        ("c-2", "2026-01-01T00:00:00.100500Z"),
        ("c-3", "2026-01-01T00:00:00.100900Z"),
        ("c-4", "2026-01-01T00:00:00.101200Z"),
        ("c-5", "2026-01-01T00:00:00.099000Z"),
    ];
    for (id, time) in at {
        let res = app
            .send(post_json(
                CONVERSATIONS,
                &employee,
                json!({"agentId": "customers.deal_analyzer", "conversationId": id}),
            ))
            .await;
        assert_eq!(res.status, 201, "{}", res.text());
        app.owner_sql(&format!(
            "UPDATE ai_chat_conversations SET created_at = '{time}' WHERE conversation_id = '{id}'"
        ))
        .await;
    }
    let pages = |cursor: Option<String>| {
        let app = &app;
        let employee = &employee;
        async move {
            let mut cursor = cursor;
            let mut pages: Vec<Vec<String>> = Vec::new();
            loop {
                let path = match &cursor {
                    Some(c) => format!("{CONVERSATIONS}?limit=2&cursor={c}"),
                    None => format!("{CONVERSATIONS}?limit=2"),
                };
                let res = app.send(get(&path, employee)).await;
                assert_eq!(res.status, 200, "{}", res.text());
                let body = res.json();
                stoa_testkit::assert_timestamps(&path, &body);
                pages.push(
                    body["items"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| c["conversationId"].as_str().unwrap().to_string())
                        .collect(),
                );
                match body["nextCursor"].as_str() {
                    Some(next) => cursor = Some(next.to_string()),
                    None => return pages,
                }
                assert!(pages.len() < 10, "{pages:?}");
            }
        }
    };
    assert_eq!(
        pages(None).await,
        [vec!["c-4"], vec!["c-3", "c-2", "c-1"], vec!["c-5"]],
        "a page ends between milliseconds, or is one millisecond whole"
    );
    // An older client's cursor (c-3's microseconds) continues right after c-3.
    assert_eq!(
        pages(Some("2026-01-01T00:00:00.100900Z".into())).await,
        [vec!["c-2", "c-1"], vec!["c-5"]]
    );
}
