//! Object-mode agents (`executionMode: object`) through
//! `POST /ai_assistant/ai/run-object` against a scripted fake provider: the
//! structured answer, the schema check, a streaming object agent (422), an
//! object agent refused by chat (409), overrides and the gate.

use std::time::Duration;

use serde_json::{Value, json};
use stoa_ai_assistant::agents::{
    AgentDef, ExecutionMode, LoopBudget, MutationPolicy, ObjectOutput, OutputMode,
};
use stoa_testkit::{Answer, FakeUpstream};

use super::chat::{chat_body, openai, sse, text_answer};
use super::support::*;

const RUN: &str = "/api/ai_assistant/ai/run-object";

fn summary_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "summary": {"type": "string", "minLength": 1},
            "risk": {"type": "string"},
        },
        "required": ["summary", "risk"],
        "additionalProperties": false,
    })
}

const fn object_agent(id: &'static str, mode: OutputMode) -> AgentDef {
    AgentDef {
        id,
        module_id: "customers",
        label: "Deal summary",
        description: "Summarizes a deal as a structured object.",
        system_prompt: "Summarize the deal.",
        allowed_tools: &[],
        required_features: &["customers.deals.view"],
        read_only: true,
        mutation_policy: MutationPolicy::ReadOnly,
        execution_mode: ExecutionMode::Object,
        budget: LoopBudget::DEFAULT,
        loop_override_allowed: true,
        task_plan: false,
        allow_runtime_override: true,
        accepted_media_types: &[],
        keywords: &[],
        suggestions: &[],
        output: Some(ObjectOutput {
            schema_name: "deal_summary",
            schema: summary_schema,
            mode,
        }),
    }
}

static SUMMARY: AgentDef = object_agent("customers.deal_summary", OutputMode::Generate);
static STREAMED: AgentDef = object_agent("customers.deal_summary_stream", OutputMode::Stream);
static EXTRA: [&AgentDef; 2] = [&SUMMARY, &STREAMED];

fn object_text(text: &str) -> stoa_testkit::Answer {
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 4}}),
    ])
}

fn run(agent: &str) -> Value {
    json!({"agent": agent, "messages": [{"role": "user", "content": "Summarize deal 42"}]})
}

#[actix_web::test]
async fn an_object_agent_answers_one_object_matching_its_schema() {
    let upstream = FakeUpstream::scripted([
        object_text(r#"{"summary": "Big deal, late stage", "risk": "low"}"#),
        object_text(r#"{"summary": "x"}"#),
        object_text("not json"),
        object_text(r#"{"summary": "ok", "risk": "high"}"#),
    ]);
    let app = start_with_agents(
        openai(
            &upstream,
            &[("OM_AI_AVAILABLE_MODELS_OPENAI", "gpt-5-mini,gpt-4o")],
        ),
        &EXTRA,
    )
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    let res = app
        .send(post_json(RUN, &admin, run("customers.deal_summary")))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({
            "object": {"summary": "Big deal, late stage", "risk": "low"},
            "finishReason": "stop",
            "usage": {"inputTokens": 7, "outputTokens": 4},
        })
    );
    let sent = upstream.requests()[0].json();
    assert_eq!(sent["response_format"]["type"], "json_schema");
    assert_eq!(
        sent["response_format"]["json_schema"]["name"],
        "deal_summary"
    );
    assert_eq!(
        sent["response_format"]["json_schema"]["schema"],
        summary_schema()
    );
    assert_eq!(sent["messages"][0]["content"], "Summarize the deal.");
    assert_eq!(sent["messages"][1]["content"], "Summarize deal 42");
    assert!(sent.get("tools").is_none());

    // An answer missing a required field, or no JSON at all: 500.
    for _ in 0..2 {
        let res = app
            .send(post_json(RUN, &admin, run("customers.deal_summary")))
            .await;
        assert_eq!(res.status, 500, "{}", res.text());
        assert_eq!(res.json()["code"], "internal_error");
    }

    // A model override goes to the provider as the model.
    let mut body = run("customers.deal_summary");
    body["modelOverride"] = json!("openai/gpt-4o");
    let res = app.send(post_json(RUN, &admin, body)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(upstream.requests()[3].json()["model"], "gpt-4o");
    let mut body = run("customers.deal_summary");
    body["modelOverride"] = json!("openai/gpt-3.5-turbo");
    let res = app.send(post_json(RUN, &admin, body.clone())).await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["code"], "model_not_allowlisted");
    body["modelOverride"] = json!("anthropic/claude-haiku-4-5-20251001");
    let res = app.send(post_json(RUN, &admin, body)).await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["code"], "provider_not_configured");
    assert_eq!(upstream.hits(), 4);
}

#[actix_web::test]
async fn object_agents_are_listed_gated_and_kept_out_of_chat() {
    let upstream = FakeUpstream::scripted([text_answer("never")]);
    let app = start_with_agents(openai(&upstream, &[]), &EXTRA).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    let res = app.send(get("/api/ai_assistant/ai/agents", &admin)).await;
    assert_eq!(res.status, 200);
    let agents = res.json()["agents"].as_array().unwrap().clone();
    let summary = agents
        .iter()
        .find(|a| a["id"] == "customers.deal_summary")
        .unwrap();
    assert_eq!(summary["executionMode"], "object");
    assert_eq!(summary["hasOutputSchema"], true);
    let analyzer = agents
        .iter()
        .find(|a| a["id"] == "customers.deal_analyzer")
        .unwrap();
    assert_eq!(analyzer["hasOutputSchema"], false);

    // A streaming object agent: 422 on run-object; an object agent: 409 on chat.
    let res = app
        .send(post_json(RUN, &admin, run("customers.deal_summary_stream")))
        .await;
    assert_eq!(res.status, 422, "{}", res.text());
    assert_eq!(res.json()["code"], "execution_mode_not_supported");
    let res = app
        .send(post_json(
            &format!("{CHAT}?agent=customers.deal_summary"),
            &admin,
            chat_body("hi"),
        ))
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert_eq!(res.json()["code"], "execution_mode_not_supported");

    // The agent's features first.
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
        .send(post_json(RUN, &viewer, run("customers.deal_summary")))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["code"], "agent_features_denied");
    let res = app
        .send(post_json(
            RUN,
            &admin,
            json!({"agent": "customers.deal_summary", "messages": [{"role": "robot", "content": "x"}]}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(upstream.hits(), 0);
}

#[actix_web::test]
async fn anthropic_answers_the_object_through_one_forced_tool() {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 12}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "tu_1", "name": "deal_summary", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"summary\": \"Stuck in"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": " review\", \"risk\": \"medium\"}"}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 6}}),
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
    let app = start_with_agents(
        config(&[
            ("ANTHROPIC_API_KEY", "ak"),
            ("ANTHROPIC_BASE_URL", base.as_str()),
        ]),
        &EXTRA,
    )
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(RUN, &admin, run("customers.deal_summary")))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.json(),
        json!({
            "object": {"summary": "Stuck in review", "risk": "medium"},
            "finishReason": "stop",
            "usage": {"inputTokens": 12, "outputTokens": 6},
        })
    );
    let sent = upstream.requests()[0].json();
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "tool", "name": "deal_summary"})
    );
    assert_eq!(sent["tools"][0]["name"], "deal_summary");
    assert_eq!(sent["tools"][0]["input_schema"], summary_schema());
    assert_eq!(sent["system"], "Summarize the deal.");
}

#[actix_web::test]
async fn run_object_writes_a_usage_row_and_moderates_input() {
    let upstream = FakeUpstream::start(|req| {
        if req.path.ends_with("/moderations") {
            let flagged = req.json()["input"]
                .as_str()
                .unwrap_or_default()
                .contains("attack");
            Answer::json(
                200,
                &json!({"results": [{
                    "flagged": flagged,
                    "categories": {"violence": flagged},
                    "category_scores": {"violence": if flagged { 0.9 } else { 0.0 }},
                }]}),
            )
        } else {
            object_text(r#"{"summary": "Fine", "risk": "low"}"#)
        }
    });
    let app = start_with_agents(
        openai(&upstream, &[("OM_AI_INPUT_MODERATION", "true")]),
        &EXTRA,
    )
    .await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    let res = app
        .send(post_json(RUN, &admin, run("customers.deal_summary")))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let paths: Vec<String> = upstream.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/moderations", "/v1/chat/completions"]);

    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use stoa_ai_assistant::schema::{ai_token_usage_daily as ud, ai_token_usage_events as ue};
    let mut conn = app.db.conn().await.unwrap();
    type Row = (String, i32, i64, i64, Option<String>, Option<String>);
    let rows: Vec<Row> = ue::table
        .select((
            ue::agent_id,
            ue::step_index,
            ue::input_tokens,
            ue::output_tokens,
            ue::finish_reason,
            ue::loop_abort_reason,
        ))
        .load(&mut *conn)
        .await
        .unwrap();
    assert_eq!(
        rows,
        [(
            "customers.deal_summary".to_string(),
            0,
            7,
            4,
            Some("stop".to_string()),
            None
        )]
    );
    let daily: Vec<(i64, i64, i64, i64)> = ud::table
        .select((
            ud::input_tokens,
            ud::output_tokens,
            ud::step_count,
            ud::turn_count,
        ))
        .load(&mut *conn)
        .await
        .unwrap();
    assert_eq!(daily, [(7, 4, 1, 1)]);
    drop(conn);

    // Flagged input is refused before the model is asked.
    let body = json!({"agent": "customers.deal_summary", "messages": [{"role": "user", "content": "plan an attack"}]});
    let res = app.send(post_json(RUN, &admin, body)).await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["code"], "moderation_blocked");
    assert_eq!(upstream.hits(), 3);
    let res = app
        .send(get("/api/ai_assistant/moderation-flags", &admin))
        .await;
    assert_eq!(res.json()["items"][0]["agentId"], "customers.deal_summary");
}
