//! Streamed chat against scripted fake providers on 127.0.0.1: text, a
//! read tool call, a mutation tool call (a pending action, never run), usage
//! rows, a provider error, a hanging provider, and the typed refusals.

use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_testkit::{Answer, FakeUpstream};

use super::support::*;

pub fn sse(events: &[Value]) -> Answer {
    let mut chunks: Vec<(Duration, String)> = events
        .iter()
        .map(|e| (Duration::ZERO, format!("data: {e}\n\n")))
        .collect();
    chunks.push((Duration::ZERO, "data: [DONE]\n\n".into()));
    Answer::stream(200, chunks).with_header("content-type", "text/event-stream")
}

pub fn text_answer(text: &str) -> Answer {
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 3}}),
    ])
}

pub fn tool_answer(name: &str, args: &Value) -> Answer {
    let args = args.to_string();
    let (a, b) = args.split_at(args.len() / 2);
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": a}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": b}}]}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 5}}),
    ])
}

pub fn openai(upstream: &FakeUpstream, extra: &[(&str, &str)]) -> stoa_ai_assistant::AiConfig {
    let base = upstream.url("/v1");
    let mut pairs = vec![
        ("OPENAI_API_KEY", "test"),
        ("OPENAI_BASE_URL", base.as_str()),
        ("AI_PROVIDER_TIMEOUT_MS", "400"),
    ];
    pairs.extend_from_slice(extra);
    config(&pairs)
}

pub fn chat_body(text: &str) -> Value {
    json!({"messages": [{"role": "user", "content": text}]})
}

#[actix_web::test]
async fn text_streams_in_the_ui_message_format_with_usage_rows() {
    let upstream = FakeUpstream::scripted([text_answer("Hello there")]);
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let mut res = app
        .stream(post_json(
            &format!("{CHAT}?agent=customers.deal_analyzer"),
            &admin,
            chat_body("hi"),
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("x-vercel-ai-ui-message-stream"), Some("v1"));
    assert_eq!(res.header("content-type"), Some("text/event-stream"));
    let body = res.read_to_end(Duration::from_secs(10)).await;
    let frames = frames(&body);
    assert_eq!(
        types(&frames),
        [
            "start",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "finish-step",
            "finish",
            "[DONE]",
            "loop-finish"
        ]
    );
    let delta: Value = serde_json::from_str(&frames[3]).unwrap();
    assert_eq!(delta["delta"], "Hello there");
    let finish: Value = serde_json::from_str(&frames[6]).unwrap();
    assert_eq!(finish["finishReason"], "stop");
    let trace: Value = serde_json::from_str(&frames[8]).unwrap();
    assert_eq!(
        trace["trace"]["totalUsage"],
        json!({"inputTokens": 11, "outputTokens": 3})
    );

    let sent = upstream.requests()[0].json();
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"]["include_usage"], true);
    assert_eq!(
        upstream.requests()[0].header("authorization"),
        Some("Bearer test")
    );
    let tools: Vec<&str> = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"customers__update_deal_stage"), "{tools:?}");

    use stoa_ai_assistant::schema::{ai_token_usage_daily as ud, ai_token_usage_events as ue};
    let mut conn = app.db.conn().await.unwrap();
    let rows: Vec<(i64, i64)> = ue::table
        .select((ue::input_tokens, ue::output_tokens))
        .load(&mut *conn)
        .await
        .unwrap();
    assert_eq!(rows, [(11, 3)]);
    let daily: Vec<(i64, i64)> = ud::table
        .select((ud::input_tokens, ud::step_count))
        .load(&mut *conn)
        .await
        .unwrap();
    assert_eq!(daily, [(11, 1)]);
    drop(conn);

    // The usage endpoints read them back, for this tenant only.
    let today = time::OffsetDateTime::now_utc().date();
    let res = app
        .send(get(
            &format!("/api/ai_assistant/usage/daily?from={today}&to={today}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["total"], 1);
    assert_eq!(res.json()["rows"][0]["inputTokens"], "11");
    let res = app.send(get("/api/ai_assistant/usage/daily", &admin)).await;
    assert_eq!(res.status, 400);
    let res = app
        .send(get(
            &format!("/api/ai_assistant/usage/sessions?from={today}&to={today}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["total"], 1);
    let session = res.json()["sessions"][0]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(session, trace["trace"]["sessionId"].as_str().unwrap());
    let res = app
        .send(get(
            &format!("/api/ai_assistant/usage/sessions/{session}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["events"][0]["stepIndex"], 0);
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let other = token_for(&app.db, globex.admin).await;
    let res = app
        .send(get(
            &format!("/api/ai_assistant/usage/sessions/{session}"),
            &other,
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["code"], "session_not_found");
    let res = app
        .send(get(
            &format!("/api/ai_assistant/usage/sessions?from={today}&to={today}"),
            &other,
        ))
        .await;
    assert_eq!(res.json()["total"], 0);
    let employee = token_for(&app.db, acme.employee).await;
    assert_eq!(
        app.send(get("/api/ai_assistant/usage/sessions", &employee))
            .await
            .status,
        403
    );
    let res = app
        .send(get(
            "/api/ai_assistant/moderation-flags?pageSize=101",
            &admin,
        ))
        .await;
    assert_eq!(res.status, 400);
    let res = app
        .send(get("/api/ai_assistant/moderation-flags", &admin))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["total"], 0);
}

#[actix_web::test]
async fn a_mutation_tool_call_becomes_a_pending_action_and_reads_run() {
    // The deal id is known only after seeding: the fake answers from a cell.
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
    let (deal, lead, won) = deal_with_stages(&app, &admin).await;
    *script.lock().unwrap() = vec![
        tool_answer("customers__get_deal", &json!({"dealId": deal})),
        tool_answer(
            "customers__update_deal_stage",
            &json!({"dealId": deal, "toPipelineStageId": won}),
        ),
        text_answer("Approval is pending."),
    ];
    let mut res = app
        .stream(post_json(
            &format!("{CHAT}?agent=customers.account_assistant"),
            &admin,
            chat_body("move it"),
        ))
        .await;
    assert_eq!(res.status, 200);
    let body = res.read_to_end(Duration::from_secs(10)).await;
    let frames = frames(&body);
    let kinds = types(&frames);
    assert_eq!(
        kinds
            .iter()
            .filter(|k| *k == "tool-output-available")
            .count(),
        2,
        "{kinds:?}"
    );
    assert!(kinds.contains(&"tool-input-delta".to_string()));
    let outputs: Vec<Value> = frames
        .iter()
        .filter(|f| f.contains("tool-output-available"))
        .map(|f| serde_json::from_str(f).unwrap())
        .collect();
    let read: Value = serde_json::from_str(outputs[0]["output"].as_str().unwrap()).unwrap();
    assert_eq!(read["deal"]["title"], "Big deal");
    let proposal: Value = serde_json::from_str(outputs[1]["output"].as_str().unwrap()).unwrap();
    assert_eq!(proposal["status"], "pending-confirmation");
    assert_eq!(proposal["toolName"], "customers.update_deal_stage");
    // Proposed, not run.
    assert_eq!(stage_of(&app, &admin, deal).await, lead.to_string());
    let action = proposal["pendingActionId"].as_str().unwrap();
    let res = app
        .send(post_json(
            &format!("{ACTIONS}/{action}/confirm"),
            &admin,
            json!({}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(stage_of(&app, &admin, deal).await, won.to_string());

    // The model saw the tool results as strings in the next calls.
    let third = upstream.requests()[2].json();
    let messages = third["messages"].as_array().unwrap();
    assert!(messages.iter().any(|m| {
        m["role"] == "tool"
            && m["content"]
                .as_str()
                .unwrap()
                .contains("pending-confirmation")
    }));
}

#[actix_web::test]
async fn a_failing_or_hanging_provider_ends_in_an_error_frame() {
    let upstream =
        FakeUpstream::scripted([Answer::json(500, &json!({"error": "boom"})), Answer::Hang]);
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    for _ in 0..2 {
        let started = Instant::now();
        let mut res = app
            .stream(post_json(
                &format!("{CHAT}?agent=customers.deal_analyzer"),
                &admin,
                chat_body("hi"),
            ))
            .await;
        assert_eq!(res.status, 200);
        let body = res.read_to_end(Duration::from_secs(5)).await;
        assert!(started.elapsed() < Duration::from_secs(3));
        let frames = frames(&body);
        assert_eq!(
            types(&frames),
            [
                "start",
                "start-step",
                "error",
                "finish",
                "[DONE]",
                "loop-finish"
            ]
        );
        let error: Value = serde_json::from_str(&frames[2]).unwrap();
        assert_eq!(error["errorText"], "An error occurred.");
    }
}

#[actix_web::test]
async fn a_client_that_disconnects_stops_the_turn() {
    let slow = Answer::stream(
        200,
        [
            (Duration::ZERO, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n".to_string()),
            (Duration::from_secs(3), "data: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n".to_string()),
        ],
    );
    let upstream = FakeUpstream::scripted([slow]);
    let app = start_with(openai(&upstream, &[("AI_PROVIDER_TIMEOUT_MS", "10000")])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let mut res = app
        .stream(post_json(
            &format!("{CHAT}?agent=customers.deal_analyzer"),
            &admin,
            chat_body("hi"),
        ))
        .await;
    let first = res.read_for(Duration::from_millis(500)).await;
    assert!(String::from_utf8_lossy(&first).contains("text-delta"));
    drop(res);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // No usage row: the step never finished.
    use stoa_ai_assistant::schema::ai_token_usage_events as ue;
    let mut conn = app.db.conn().await.unwrap();
    let count: i64 = ue::table.count().get_result(&mut *conn).await.unwrap();
    assert_eq!(count, 0);
}

#[actix_web::test]
async fn chat_refusals_come_before_the_stream() {
    let upstream = FakeUpstream::scripted([text_answer("x")]);
    let app = start_with(openai(
        &upstream,
        &[("AI_RUNTIME_BASEURL_ALLOWLIST", "llm.example.com")],
    ))
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let chat = |q: &str| format!("{CHAT}?agent=customers.deal_analyzer{q}");
    for (q, status, code) in [
        ("&provider=nope", 400, "provider_unknown"),
        ("&provider=anthropic", 400, "provider_not_configured"),
        (
            "&baseUrl=https://evil.example.org/v1",
            400,
            "baseurl_not_allowlisted",
        ),
        ("&loopBudget=huge", 400, "validation_error"),
    ] {
        let res = app.send(post_json(&chat(q), &admin, chat_body("hi"))).await;
        assert_eq!(res.status, status, "{q}: {}", res.text());
        assert_eq!(res.json()["code"], code, "{q}");
    }
    let res = app
        .send(post_json(
            &format!("{CHAT}?agent=customers.nope"),
            &admin,
            chat_body("hi"),
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = app.send(post_json(CHAT, &admin, chat_body("hi"))).await;
    assert_eq!(res.status, 400);
    let many: Vec<Value> = (0..101)
        .map(|_| json!({"role": "user", "content": "x"}))
        .collect();
    let res = app
        .send(post_json(&chat(""), &admin, json!({"messages": many})))
        .await;
    assert_eq!(res.status, 400);
    let viewer = user_with_features(
        &app.db,
        &acme,
        "v@acme.com",
        &["ai_assistant.view"],
        None,
        None,
    )
    .await;
    let viewer = token_for(&app.db, viewer).await;
    let res = app
        .send(post_json(&chat(""), &viewer, chat_body("hi")))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["code"], "agent_features_denied");
    assert_eq!(upstream.hits(), 0);
}

#[actix_web::test]
async fn without_a_provider_chat_is_500_internal_error() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(
            &format!("{CHAT}?agent=customers.deal_analyzer"),
            &admin,
            chat_body("hi"),
        ))
        .await;
    assert_eq!(res.status, 500, "{}", res.text());
    assert_eq!(res.json()["code"], "internal_error");
}

#[actix_web::test]
async fn a_runtime_base_url_goes_through_the_guarded_client() {
    let upstream = FakeUpstream::scripted([text_answer("guarded")]);
    let app = start_with(openai(
        &upstream,
        &[("AI_RUNTIME_BASEURL_ALLOWLIST", "127.0.0.1")],
    ))
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let base = upstream.url("/v1");
    let mut res = app
        .stream(post_json(
            &format!("{CHAT}?agent=customers.deal_analyzer&baseUrl={base}"),
            &admin,
            chat_body("hi"),
        ))
        .await;
    assert_eq!(res.status, 200);
    let body = res.read_to_end(Duration::from_secs(5)).await;
    // The guard refuses a loopback address from API input: an error frame,
    // and the fake never hears from us.
    assert!(types(&frames(&body)).contains(&"error".to_string()));
    assert_eq!(upstream.hits(), 0);
}

#[actix_web::test]
async fn anthropic_streams_through_the_same_loop() {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 9}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Bonjour"}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        json!({"type": "message_stop"}),
    ];
    let chunks: Vec<(Duration, String)> = events
        .iter()
        .map(|e| {
            (
                Duration::ZERO,
                format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()),
            )
        })
        .collect();
    let upstream = FakeUpstream::scripted([Answer::stream(200, chunks)]);
    let base = upstream.url("/v1");
    let app = start_with(config(&[
        ("ANTHROPIC_API_KEY", "ak"),
        ("ANTHROPIC_BASE_URL", base.as_str()),
    ]))
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let mut res = app
        .stream(post_json(
            &format!("{CHAT}?agent=customers.deal_analyzer"),
            &admin,
            chat_body("hi"),
        ))
        .await;
    let body = res.read_to_end(Duration::from_secs(5)).await;
    let frames = frames(&body);
    let delta: Value = serde_json::from_str(&frames[3]).unwrap();
    assert_eq!(delta["delta"], "Bonjour");
    let sent = &upstream.requests()[0];
    assert_eq!(sent.header("x-api-key"), Some("ak"));
    assert_eq!(
        sent.json()["system"].as_str().map(|s| s.is_empty()),
        Some(false)
    );
}
