//! Input moderation: off by default; on through `OM_AI_INPUT_MODERATION`
//! or the tenant's settings; flagged input is 400 `moderation_blocked`
//! before any model call, with a flag row (no text) the flag list reads and
//! an event; an unreachable moderation endpoint (tried twice) lets it pass.

use std::time::Duration;

use serde_json::{Value, json};
use stoa_testkit::{Answer, AppService, FakeUpstream, TestApp, outbox_events_named};

use super::chat::{chat_body, openai, text_answer};
use super::support::*;

const FLAGS: &str = "/api/ai_assistant/moderation-flags";

/// Flags input containing "attack"; moderation answers 500 when `broken`.
fn provider(broken: bool) -> FakeUpstream {
    FakeUpstream::start(move |req| {
        if req.path.ends_with("/moderations") {
            if broken {
                return Answer::status(503);
            }
            let input = req.json()["input"].as_str().unwrap_or_default().to_string();
            let flagged = input.contains("attack");
            Answer::json(
                200,
                &json!({"id": "modr-1", "model": "omni-moderation-latest", "results": [{
                    "flagged": flagged,
                    "categories": {"violence": flagged, "hate": false},
                    "category_scores": {"violence": if flagged { 0.97 } else { 0.01 }, "hate": 0.001},
                }]}),
            )
        } else {
            text_answer("Fine.")
        }
    })
}

fn paths(upstream: &FakeUpstream) -> Vec<String> {
    upstream.requests().into_iter().map(|r| r.path).collect()
}

async fn chat<S: AppService>(app: &TestApp<S>, token: &str, text: &str) -> (u16, Value) {
    let mut res = app
        .stream(post_json(
            &format!("{CHAT}?agent=customers.deal_analyzer"),
            token,
            chat_body(text),
        ))
        .await;
    let body = res.read_to_end(Duration::from_secs(10)).await;
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    (res.status.as_u16(), json)
}

#[actix_web::test]
async fn flagged_input_is_refused_and_recorded_without_its_text() {
    let upstream = provider(false);
    let app = start_with(openai(&upstream, &[("OM_AI_INPUT_MODERATION", "true")])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    let (status, body) = chat(&app, &admin, "plan an attack").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["code"], "moderation_blocked");
    assert_eq!(paths(&upstream), ["/v1/moderations"]);
    let sent = upstream.requests()[0].json();
    assert_eq!(
        sent,
        json!({"model": "omni-moderation-latest", "input": "plan an attack"})
    );
    assert_eq!(
        upstream.requests()[0].header("authorization"),
        Some("Bearer test")
    );

    let res = app.send(get(FLAGS, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let flags = res.json();
    assert_eq!(flags["total"], 1);
    let flag = &flags["items"][0];
    assert_eq!(flag["agentId"], "customers.deal_analyzer");
    assert_eq!(flag["userId"], json!(acme.admin));
    assert_eq!(flag["providerId"], "openai");
    assert_eq!(
        flag["categories"]["violence"],
        json!({"flagged": true, "score": 0.97})
    );
    assert!(!flag.to_string().contains("attack"));
    let events = outbox_events_named(&app.db, "ai_assistant.moderation_flag.created").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["payload"]["categories"], json!(["violence"]));
    assert_eq!(events[0]["payload"]["agentId"], "customers.deal_analyzer");

    // Clean input goes through to the model.
    let (status, _) = chat(&app, &admin, "hello").await;
    assert_eq!(status, 200);
    assert_eq!(
        paths(&upstream)[1..],
        ["/v1/moderations", "/v1/chat/completions"]
    );

    // Another tenant does not see the flag.
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let globex = token_for(&app.db, globex.admin).await;
    let res = app.send(get(FLAGS, &globex)).await;
    assert_eq!(res.json()["total"], 0);
}

#[actix_web::test]
async fn moderation_is_off_by_default_and_the_tenant_can_turn_it_on() {
    let upstream = provider(false);
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (status, _) = chat(&app, &admin, "plan an attack").await;
    assert_eq!(status, 200);
    assert_eq!(paths(&upstream), ["/v1/chat/completions"]);

    let res = app
        .send(put_json(
            "/api/ai_assistant/settings",
            &admin,
            json!({"inputModeration": true}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (status, body) = chat(&app, &admin, "plan an attack").await;
    assert_eq!(status, 400);
    assert_eq!(body["code"], "moderation_blocked");
    // The agent's own row wins over the tenant-wide one.
    let res = app
        .send(put_json(
            "/api/ai_assistant/settings",
            &admin,
            json!({"agentId": "customers.deal_analyzer", "inputModeration": false}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (status, _) = chat(&app, &admin, "plan an attack").await;
    assert_eq!(status, 200);
}

#[actix_web::test]
async fn an_unreachable_moderation_endpoint_is_retried_once_then_allowed() {
    let upstream = provider(true);
    let app = start_with(openai(&upstream, &[("OM_AI_INPUT_MODERATION", "1")])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (status, _) = chat(&app, &admin, "plan an attack").await;
    assert_eq!(status, 200);
    assert_eq!(
        paths(&upstream),
        ["/v1/moderations", "/v1/moderations", "/v1/chat/completions"]
    );
    let res = app.send(get(FLAGS, &admin)).await;
    assert_eq!(res.json()["total"], 0);
}
