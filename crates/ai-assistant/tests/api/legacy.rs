//! The legacy chat (no OpenCode here: its checks, then one error frame) and
//! the intent router (the provider picks an offered tool or general chat).

use std::time::Duration;

use actix_web::test::TestRequest;
use serde_json::{Value, json};
use stoa_testkit::FakeUpstream;

use super::chat::{openai, text_answer};
use super::support::*;

const LEGACY: &str = "/api/ai_assistant/chat";
const ROUTE: &str = "/api/ai_assistant/route";

#[actix_web::test]
async fn the_legacy_chat_checks_its_input_then_says_opencode_is_absent() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let nobody = user_with_features(&app.db, &acme, "n@acme.com", &[], None, None).await;
    let nobody = token_for(&app.db, nobody).await;
    let ok = json!({"messages": [{"role": "user", "content": "hi"}]});

    assert_eq!(
        app.send(TestRequest::post().uri(LEGACY).set_json(ok.clone()))
            .await
            .status,
        401
    );
    assert_eq!(
        app.send(post_json(LEGACY, &nobody, ok.clone()))
            .await
            .status,
        403
    );
    let res = app.send(post_json(LEGACY, &admin, json!({}))).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "messages array is required");
    let res = app
        .send(post_json(
            LEGACY,
            &admin,
            json!({"messages": [{"role": "assistant", "content": "hi"}]}),
        ))
        .await;
    assert_eq!(res.status, 400);
    let res = app
        .send(post_json(
            LEGACY,
            &admin,
            json!({"answerQuestion": {"questionId": "q1", "answer": 1, "sessionId": "s"}}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["code"], "question_not_found");

    let mut res = app.stream(post_json(LEGACY, &admin, ok)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), Some("text/event-stream"));
    let body = res.read_to_end(Duration::from_secs(5)).await;
    let frames = frames(&body);
    assert_eq!(frames.len(), 1, "{frames:?}");
    let frame: Value = serde_json::from_str(&frames[0]).unwrap();
    assert_eq!(frame["type"], "error");
    assert!(frame["error"].as_str().unwrap().contains("OpenCode"));
}

#[actix_web::test]
async fn the_router_asks_the_provider_and_keeps_to_the_offered_tools() {
    let upstream = FakeUpstream::scripted([
        text_answer(
            "{\"intent\":\"tool\",\"toolName\":\"customers.get_deal\",\"confidence\":0.9,\"reasoning\":\"A deal question\"}",
        ),
        text_answer(
            "{\"intent\":\"tool\",\"toolName\":\"customers.delete_everything\",\"confidence\":0.9}",
        ),
    ]);
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let body = json!({"query": "how is the Big deal doing?", "availableTools": [
        {"name": "customers.get_deal", "description": "Reads a deal"},
    ]});
    let res = app.send(post_json(ROUTE, &admin, body.clone())).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({"intent": "tool", "toolName": "customers.get_deal", "confidence": 0.9, "reasoning": "A deal question"})
    );
    let sent = upstream.requests()[0].json();
    assert!(
        sent["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("customers.get_deal: Reads a deal")
    );
    assert_eq!(sent["messages"][1]["content"], "how is the Big deal doing?");
    // A tool that was not offered is general chat.
    let res = app.send(post_json(ROUTE, &admin, body)).await;
    assert_eq!(res.json()["intent"], "general_chat");
    assert_eq!(res.json()["confidence"], 0.0);

    for bad in [json!({"availableTools": []}), json!({"query": "x"})] {
        let res = app.send(post_json(ROUTE, &admin, bad)).await;
        assert_eq!(res.status, 400);
    }
    let nobody = user_with_features(&app.db, &acme, "n@acme.com", &[], None, None).await;
    let nobody = token_for(&app.db, nobody).await;
    let res = app
        .send(post_json(
            ROUTE,
            &nobody,
            json!({"query": "x", "availableTools": []}),
        ))
        .await;
    assert_eq!(res.status, 403);
}

#[actix_web::test]
async fn the_router_without_a_provider_is_503() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            ROUTE,
            &admin,
            json!({"query": "x", "availableTools": []}),
        ))
        .await;
    assert_eq!(res.status, 503);
    assert_eq!(res.json()["code"], "no_provider");
}
