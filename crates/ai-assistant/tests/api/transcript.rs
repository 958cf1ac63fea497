//! Chat keeps its turns in the conversation the request names (the user's
//! message and the assistant's answer with its mutation cards), for the
//! caller's own conversation in the caller's tenant only.

use std::time::Duration;

use serde_json::{Value, json};
use stoa_testkit::{Answer, AppService, FakeUpstream, TestApp};

use super::chat::{openai, text_answer, tool_answer};
use super::support::*;

const CONVERSATIONS: &str = "/api/ai_assistant/ai/conversations";

async fn chat<S: AppService>(app: &TestApp<S>, token: &str, agent: &str, body: Value) {
    let mut res = app
        .stream(post_json(&format!("{CHAT}?agent={agent}"), token, body))
        .await;
    assert_eq!(res.status, 200);
    let body = res.read_to_end(Duration::from_secs(10)).await;
    let kinds = types(&frames(&body));
    assert!(kinds.contains(&"[DONE]".to_string()), "{kinds:?}");
}

#[expect(clippy::unwrap_used, reason = "a helper failing its test")]
async fn messages<S: AppService>(app: &TestApp<S>, token: &str, key: &str) -> Vec<Value> {
    let res = app
        .send(get(&format!("{CONVERSATIONS}/{key}"), token))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()["messages"].as_array().unwrap().clone()
}

#[actix_web::test]
async fn a_chat_with_a_session_keeps_both_messages_in_the_conversation() {
    let upstream = FakeUpstream::scripted([text_answer("Hello there")]);
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let session = uuid::Uuid::new_v4();
    let turn = |id: &str, text: &str| {
        json!({"sessionId": session, "messages": [
            {"id": "m0", "role": "user", "content": "earlier"},
            {"id": "a0", "role": "assistant", "content": "answered"},
            {"id": id, "role": "user", "content": text},
        ]})
    };
    chat(&app, &admin, "customers.deal_analyzer", turn("m1", "hi")).await;
    let key = session.to_string();
    let kept = messages(&app, &admin, &key).await;
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert_eq!(kept[0]["role"], "user");
    assert_eq!(kept[0]["clientMessageId"], "m1");
    assert_eq!(kept[0]["content"], "hi");
    assert_eq!(kept[0]["senderUserId"], json!(acme.admin));
    assert_eq!(kept[1]["role"], "assistant");
    assert_eq!(kept[1]["clientMessageId"], "m1:assistant");
    assert_eq!(kept[1]["content"], "Hello there");
    assert_eq!(kept[1]["model"], "gpt-5-mini");
    assert_eq!(kept[1]["senderUserId"], json!(null));
    let res = app
        .send(get(&format!("{CONVERSATIONS}/{key}"), &admin))
        .await;
    let conversation = &res.json()["conversation"];
    assert_eq!(conversation["agentId"], "customers.deal_analyzer");
    assert!(conversation["lastMessageAt"].is_string());

    // The next turn adds two; a re-sent turn adds nothing.
    chat(&app, &admin, "customers.deal_analyzer", turn("m2", "more")).await;
    chat(&app, &admin, "customers.deal_analyzer", turn("m2", "more")).await;
    assert_eq!(messages(&app, &admin, &key).await.len(), 4);

    // A turn naming no conversation keeps nothing.
    chat(
        &app,
        &admin,
        "customers.deal_analyzer",
        json!({"messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    let res = app.send(get(CONVERSATIONS, &admin)).await;
    assert_eq!(res.json()["items"].as_array().unwrap().len(), 1);

    // Someone else's conversation of that id is never written to: another
    // user of the tenant, or a user of another tenant (who gets their own).
    let other = user_with_features(
        &app.db,
        &acme,
        "o@acme.com",
        &["ai_assistant.view", "customers.deals.view"],
        None,
        None,
    )
    .await;
    let other = token_for(&app.db, other).await;
    chat(&app, &other, "customers.deal_analyzer", turn("m3", "mine?")).await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let globex = token_for(&app.db, globex.admin).await;
    chat(&app, &globex, "customers.deal_analyzer", turn("m3", "ours")).await;
    assert_eq!(messages(&app, &admin, &key).await.len(), 4);
    let theirs = messages(&app, &globex, &key).await;
    assert_eq!(theirs.len(), 2);
    assert_eq!(theirs[0]["content"], "ours");
}

#[actix_web::test]
async fn a_proposed_mutation_is_kept_as_a_mutation_card() {
    let script: std::sync::Arc<std::sync::Mutex<Vec<Answer>>> = Default::default();
    let cell = script.clone();
    let upstream = FakeUpstream::start(move |_| {
        let mut s = cell.lock().unwrap();
        if s.is_empty() {
            Answer::status(500)
        } else {
            s.remove(0)
        }
    });
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, _, won) = deal_with_stages(&app, &admin).await;
    *script.lock().unwrap() = vec![
        tool_answer(
            "customers__update_deal_stage",
            &json!({"dealId": deal, "toPipelineStageId": won}),
        ),
        text_answer("Approval is pending."),
    ];
    chat(
        &app,
        &admin,
        "customers.account_assistant",
        json!({"conversationId": "legacy-conv", "messages": [{"id": "u1", "role": "user", "content": "move it"}]}),
    )
    .await;
    let kept = messages(&app, &admin, "legacy-conv").await;
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert_eq!(kept[1]["content"], "Approval is pending.");
    let card = &kept[1]["uiParts"][0];
    assert_eq!(card["componentId"], "mutation-preview-card");
    assert_eq!(card["props"]["status"], "pending-confirmation");
    assert_eq!(card["props"]["toolName"], "customers.update_deal_stage");
    let action = card["props"]["pendingActionId"].as_str().unwrap();
    let res = app.send(get(&format!("{ACTIONS}/{action}"), &admin)).await;
    assert_eq!(res.status, 200);
}
