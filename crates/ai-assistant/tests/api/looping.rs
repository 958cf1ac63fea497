//! The loop settings applied at run time against a scripted fake provider:
//! the agent's declaration, the stored loop override (agent row, else the
//! tenant-wide row) and the call's `loopBudget`; each limit stops the loop
//! after the step where it is reached, the stream ends cleanly and the
//! step's usage row and the `loop-finish` trace say why.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_ai_assistant::schema::{ai_agent_runtime_overrides as ro, ai_token_usage_events as ue};
use stoa_testkit::{Answer, AppService, FakeUpstream, TestApp};
use uuid::Uuid;

use super::chat::{chat_body, openai, sse, text_answer};
use super::support::*;

const AGENTS: &str = "/api/ai_assistant/ai/agents";

/// A streamed tool call (id `id`) using 20 + 5 tokens.
pub fn tool_call(id: &str, name: &str, args: &Value) -> Answer {
    let args = args.to_string();
    let (a, b) = args.split_at(args.len() / 2);
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": a}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": b}}]}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 5}}),
    ])
}

/// A fake provider answering from a queue the test refills per turn (500
/// once it is empty).
#[expect(
    clippy::unwrap_used,
    reason = "a test helper fails the calling test by panicking"
)]
pub fn queued() -> (Arc<Mutex<Vec<Answer>>>, FakeUpstream) {
    let script: Arc<Mutex<Vec<Answer>>> = Arc::default();
    let cell = script.clone();
    let upstream = FakeUpstream::start(move |_| {
        let mut s = cell.lock().unwrap();
        if s.is_empty() {
            Answer::status(500)
        } else {
            s.remove(0)
        }
    });
    (script, upstream)
}

/// `n` product lookups, then a text answer.
fn lookups(n: usize) -> Vec<Answer> {
    let mut answers: Vec<Answer> = (0..n)
        .map(|i| {
            tool_call(
                &format!("call_{i}"),
                "catalog__get_product",
                &json!({"productId": Uuid::nil()}),
            )
        })
        .collect();
    answers.push(text_answer("Done."));
    answers
}

struct Turn {
    frames: Vec<String>,
    trace: Value,
    /// Each step's `loop_abort_reason`, in step order.
    aborts: Vec<Option<String>>,
    hits: usize,
}

#[expect(
    clippy::unwrap_used,
    reason = "a test helper fails the calling test by panicking"
)]
async fn turn<S: AppService>(
    app: &TestApp<S>,
    upstream: &FakeUpstream,
    script: &Mutex<Vec<Answer>>,
    token: &str,
    agent_query: &str,
    answers: Vec<Answer>,
) -> Turn {
    *script.lock().unwrap() = answers;
    let before = upstream.hits();
    let mut res = app
        .stream(post_json(
            &format!("{CHAT}?agent={agent_query}"),
            token,
            chat_body("look around"),
        ))
        .await;
    assert_eq!(res.status, 200);
    let body = res.read_to_end(Duration::from_secs(10)).await;
    let frames = frames(&body);
    let last = frames.last().cloned().unwrap_or_default();
    let trace: Value = serde_json::from_str::<Value>(&last).unwrap()["trace"].clone();
    let turn_id: Uuid = trace["turnId"].as_str().unwrap().parse().unwrap();
    let mut conn = app.db.conn().await.unwrap();
    let aborts: Vec<Option<String>> = ue::table
        .filter(ue::turn_id.eq(turn_id))
        .order(ue::step_index)
        .select(ue::loop_abort_reason)
        .load(&mut *conn)
        .await
        .unwrap();
    Turn {
        frames,
        trace,
        aborts,
        hits: upstream.hits() - before,
    }
}

fn stopped(turn: &Turn) -> &str {
    turn.trace["stopReason"].as_str().unwrap_or_default()
}

/// The aborts expected of `steps` steps, the last stopped by `reason`.
fn last_aborted(steps: usize, reason: &str) -> Vec<Option<String>> {
    let mut out = vec![None; steps - 1];
    out.push(Some(reason.to_string()));
    out
}

async fn put_loop<S: AppService>(app: &TestApp<S>, token: &str, agent: &str, body: Value) {
    let res = app
        .send(put_json(
            &format!("{AGENTS}/{agent}/loop-override"),
            token,
            body,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}

#[actix_web::test]
async fn steps_tool_calls_and_the_disabled_loop_follow_declaration_override_and_call() {
    let (script, upstream) = queued();
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let agent = "catalog.catalog_assistant";

    // The declaration: at most 4 steps.
    let t = turn(&app, &upstream, &script, &admin, agent, lookups(5)).await;
    assert_eq!(t.hits, 4);
    assert_eq!(stopped(&t), "max-steps");
    assert_eq!(t.aborts, last_aborted(4, "max-steps"));
    let kinds = types(&t.frames);
    assert_eq!(
        kinds[kinds.len() - 3..],
        ["finish", "[DONE]", "loop-finish"]
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| k.starts_with("tool-output"))
            .count(),
        4
    );

    // The stored override narrows it.
    put_loop(&app, &admin, agent, json!({"loopMaxSteps": 2})).await;
    let t = turn(&app, &upstream, &script, &admin, agent, lookups(5)).await;
    assert_eq!((t.hits, stopped(&t)), (2, "max-steps"));
    assert_eq!(t.aborts, last_aborted(2, "max-steps"));

    put_loop(&app, &admin, agent, json!({"loopMaxToolCalls": 1})).await;
    let t = turn(&app, &upstream, &script, &admin, agent, lookups(5)).await;
    assert_eq!((t.hits, stopped(&t)), (1, "budget-tool-calls"));
    assert_eq!(t.aborts, last_aborted(1, "budget-tool-calls"));

    // A disabled loop runs one step (its tools still run).
    put_loop(&app, &admin, agent, json!({"loopDisabled": true})).await;
    let t = turn(&app, &upstream, &script, &admin, agent, lookups(5)).await;
    assert_eq!((t.hits, stopped(&t)), (1, "loop-disabled"));
    assert!(
        types(&t.frames)
            .iter()
            .any(|k| k.starts_with("tool-output"))
    );

    // The call's budget beats the stored override: loose allows 20 steps.
    put_loop(&app, &admin, agent, json!({"loopMaxSteps": 2})).await;
    let t = turn(
        &app,
        &upstream,
        &script,
        &admin,
        &format!("{agent}&loopBudget=loose"),
        lookups(3),
    )
    .await;
    assert_eq!((t.hits, stopped(&t)), (4, "finish-reason"));
    assert_eq!(t.aborts, vec![None; 4]);

    // Tight: three tool calls at most.
    let res = app
        .send(delete(&format!("{AGENTS}/{agent}/loop-override"), &admin))
        .await;
    assert_eq!(res.status, 200);
    let t = turn(
        &app,
        &upstream,
        &script,
        &admin,
        &format!("{agent}&loopBudget=tight"),
        lookups(5),
    )
    .await;
    assert_eq!((t.hits, stopped(&t)), (3, "budget-tool-calls"));
    // A tool-free answer ends the turn whatever the limits.
    let t = turn(
        &app,
        &upstream,
        &script,
        &admin,
        agent,
        vec![text_answer("Hi.")],
    )
    .await;
    assert_eq!((t.hits, stopped(&t)), (1, "finish-reason"));
    assert_eq!(t.aborts, [None]);
}

#[actix_web::test]
async fn tokens_stop_conditions_and_the_tenant_wide_row_stop_the_loop() {
    let (script, upstream) = queued();
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let agent = "catalog.catalog_assistant";

    // 25 tokens a step: the second step reaches 30.
    put_loop(&app, &admin, agent, json!({"loopMaxTokens": 30})).await;
    let t = turn(&app, &upstream, &script, &admin, agent, lookups(5)).await;
    assert_eq!((t.hits, stopped(&t)), (2, "budget-tokens"));
    assert_eq!(t.aborts, last_aborted(2, "budget-tokens"));

    put_loop(
        &app,
        &admin,
        agent,
        json!({"loopStopWhenJson": [{"kind": "stepCount", "count": 3}]}),
    )
    .await;
    let t = turn(&app, &upstream, &script, &admin, agent, lookups(5)).await;
    assert_eq!((t.hits, stopped(&t)), (3, "stop-condition"));
    assert_eq!(t.aborts, last_aborted(3, "stop-condition"));

    put_loop(
        &app,
        &admin,
        agent,
        json!({"loopStopWhenJson": [{"kind": "hasToolCall", "toolName": "catalog.get_product"}]}),
    )
    .await;
    let t = turn(&app, &upstream, &script, &admin, agent, lookups(5)).await;
    assert_eq!((t.hits, stopped(&t)), (1, "stop-condition"));

    // No agent row: the tenant-wide row's loop columns apply.
    let res = app
        .send(delete(&format!("{AGENTS}/{agent}/loop-override"), &admin))
        .await;
    assert_eq!(res.status, 200);
    let res = app
        .send(put_json(
            "/api/ai_assistant/settings",
            &admin,
            json!({"inputModeration": false}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let mut conn = app.db.conn().await.unwrap();
    let updated = diesel::update(ro::table.filter(ro::agent_id.is_null()))
        .set(ro::loop_max_steps.eq(Some(1)))
        .execute(&mut *conn)
        .await
        .unwrap();
    assert_eq!(updated, 1);
    drop(conn);
    let t = turn(&app, &upstream, &script, &admin, agent, lookups(5)).await;
    assert_eq!((t.hits, stopped(&t)), (1, "max-steps"));
    // An agent row setting a loop column wins over the tenant-wide row.
    put_loop(&app, &admin, agent, json!({"loopMaxSteps": 2})).await;
    let t = turn(&app, &upstream, &script, &admin, agent, lookups(5)).await;
    assert_eq!((t.hits, stopped(&t)), (2, "max-steps"));

    // Another tenant's loop is its own: the declared 4 steps.
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let other = token_for(&app.db, globex.admin).await;
    let t = turn(&app, &upstream, &script, &other, agent, lookups(5)).await;
    assert_eq!((t.hits, stopped(&t)), (4, "max-steps"));
}

#[actix_web::test]
async fn active_tools_narrow_what_the_model_is_offered() {
    let (script, upstream) = queued();
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let agent = "catalog.merchandising_assistant";
    let offered = |i: usize| -> Vec<String> {
        upstream.requests()[i].json()["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };

    let t = turn(
        &app,
        &upstream,
        &script,
        &admin,
        agent,
        vec![text_answer("Hi.")],
    )
    .await;
    assert_eq!(t.hits, 1);
    assert_eq!(
        offered(0),
        ["catalog__get_product", "catalog__update_product"]
    );

    put_loop(
        &app,
        &admin,
        agent,
        json!({"loopActiveToolsJson": ["catalog.get_product"]}),
    )
    .await;
    // The model names the tool it was not offered: an error it reads, and
    // nothing is proposed.
    let t = turn(
        &app,
        &upstream,
        &script,
        &admin,
        agent,
        vec![
            tool_call(
                "call_u",
                "catalog__update_product",
                &json!({"productId": Uuid::nil(), "title": "New"}),
            ),
            text_answer("Sorry."),
        ],
    )
    .await;
    assert_eq!(t.hits, 2);
    assert_eq!(offered(1), ["catalog__get_product"]);
    let error = t
        .frames
        .iter()
        .find(|f| f.contains("tool-output-error"))
        .unwrap();
    assert!(error.contains("not available"), "{error}");
    let mut conn = app.db.conn().await.unwrap();
    use stoa_ai_assistant::schema::ai_pending_actions as pa;
    let actions: i64 = pa::table.count().get_result(&mut *conn).await.unwrap();
    assert_eq!(actions, 0);
}

#[actix_web::test]
async fn the_wall_clock_budget_cuts_a_slow_step_and_ends_the_stream_cleanly() {
    let slow = Answer::stream(
        200,
        [
            (
                Duration::ZERO,
                "data: {\"choices\":[{\"delta\":{\"content\":\"Thinking\"}}]}\n\n".to_string(),
            ),
            (
                Duration::from_secs(4),
                "data: {\"choices\":[{\"delta\":{\"content\":\" more\"},\"finish_reason\":\"stop\"}]}\n\n".to_string(),
            ),
        ],
    );
    let (script, upstream) = queued();
    let app = start_with(openai(&upstream, &[("AI_PROVIDER_TIMEOUT_MS", "10000")])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let agent = "catalog.catalog_assistant";
    put_loop(&app, &admin, agent, json!({"loopMaxWallClockMs": 300})).await;
    let started = Instant::now();
    let t = turn(&app, &upstream, &script, &admin, agent, vec![slow]).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(
        types(&t.frames),
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
    assert_eq!(stopped(&t), "budget-wall-clock");
    assert_eq!(t.aborts, [Some("budget-wall-clock".to_string())]);
    let finish: Value = serde_json::from_str(&t.frames[6]).unwrap();
    assert_eq!(finish["finishReason"], "other");

    // A tool call cut half-way is not run, ends in an error frame, and its
    // task (an agent with a task plan) fails.
    let agent = "customers.account_assistant";
    put_loop(&app, &admin, agent, json!({"loopMaxWallClockMs": 300})).await;
    let half = Answer::stream(
        200,
        [
            (
                Duration::ZERO,
                "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"customers__get_deal\",\"arguments\":\"{\\\"dealId\"}}]}}]}\n\n".to_string(),
            ),
            (
                Duration::from_secs(4),
                "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n".to_string(),
            ),
        ],
    );
    let t = turn(
        &app,
        &upstream,
        &script,
        &admin,
        agent,
        vec![half, text_answer("x")],
    )
    .await;
    assert_eq!(t.hits, 1);
    assert_eq!(stopped(&t), "budget-wall-clock");
    assert_eq!(
        types(&t.frames),
        [
            "start",
            "start-step",
            "data-agent-task-plan",
            "tool-input-start",
            "tool-input-delta",
            "tool-output-error",
            "data-agent-task-update",
            "finish-step",
            "finish",
            "[DONE]",
            "loop-finish"
        ]
    );
    let failed: Value = serde_json::from_str(&t.frames[6]).unwrap();
    assert_eq!(failed["task"]["state"], "failed");
    assert_eq!(
        t.trace["steps"][0]["toolCalls"][0]["error"]["code"],
        "budget-wall-clock"
    );
}
