//! Task-plan frames of an agent with `taskPlan{enabled}`: the plan before
//! the first tool's `tool-input-start`, running updates before each tool's
//! input frames, done / failed after its output, `planId = turn_<turnId>`,
//! runtime labels, and the agent's own plan through
//! `meta.update_task_plan`.

use std::time::Duration;

use serde_json::{Value, json};
use stoa_testkit::{AppService, TestApp};

use super::chat::{chat_body, openai, text_answer};
use super::looping::{queued, tool_call};
use super::support::*;

#[expect(
    clippy::unwrap_used,
    reason = "a test helper fails the calling test by panicking"
)]
async fn chat<S: AppService>(app: &TestApp<S>, token: &str, agent: &str) -> Vec<Value> {
    let mut res = app
        .stream(post_json(
            &format!("{CHAT}?agent={agent}"),
            token,
            chat_body("look at the deal"),
        ))
        .await;
    assert_eq!(res.status, 200);
    let body = res.read_to_end(Duration::from_secs(10)).await;
    frames(&body)
        .iter()
        .map(|f| {
            if f == "[DONE]" {
                json!({"type": "[DONE]"})
            } else {
                serde_json::from_str(f).unwrap()
            }
        })
        .collect()
}

/// Each frame's type; a task frame as `type:<task id>:<state>`.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper fails the calling test by panicking"
)]
fn sequence(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .map(|f| {
            let kind = f["type"].as_str().unwrap_or_default();
            match kind {
                "data-agent-task-update" => {
                    format!(
                        "update:{}:{}",
                        f["task"]["id"].as_str().unwrap(),
                        f["task"]["state"].as_str().unwrap()
                    )
                }
                "data-agent-task-plan" => format!(
                    "plan:{}",
                    f["tasks"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| format!(
                            "{}:{}",
                            t["id"].as_str().unwrap(),
                            t["state"].as_str().unwrap()
                        ))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                other => other.to_string(),
            }
        })
        .collect()
}

#[actix_web::test]
async fn runtime_tasks_frame_each_tool_call() {
    let (script, upstream) = queued();
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, _, _) = deal_with_stages(&app, &admin).await;
    *script.lock().unwrap() = vec![
        tool_call("c1", "customers__get_deal", &json!({"dealId": deal})),
        tool_call(
            "c2",
            "customers__get_deal",
            &json!({"dealId": "not-a-uuid"}),
        ),
        text_answer("Here it is."),
    ];
    let frames = chat(&app, &admin, "customers.account_assistant").await;
    assert_eq!(
        sequence(&frames),
        [
            "start",
            "start-step",
            "plan:c1:running",
            "tool-input-start",
            "tool-input-delta",
            "tool-input-delta",
            "update:c1:running",
            "tool-input-available",
            "tool-output-available",
            "update:c1:done",
            "finish-step",
            "start-step",
            "update:c2:running",
            "tool-input-start",
            "tool-input-delta",
            "tool-input-delta",
            "update:c2:running",
            "tool-input-available",
            "tool-output-error",
            "update:c2:failed",
            "finish-step",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "finish-step",
            "finish",
            "[DONE]",
            "loop-finish",
        ]
    );
    let turn = frames.last().unwrap()["trace"]["turnId"]
        .as_str()
        .unwrap()
        .to_string();
    let plan = &frames[2];
    assert_eq!(plan["planId"], format!("turn_{turn}"));
    assert_eq!(
        plan["tasks"],
        json!([{
            "id": "c1",
            "label": "Customers · Get deal",
            "state": "running",
            "source": "runtime",
            "detail": "customers.get_deal",
            "toolCallId": "c1",
        }])
    );
    assert!(
        frames
            .iter()
            .filter(|f| f["type"] == "data-agent-task-update")
            .all(|f| f["planId"] == plan["planId"] && f.get("data").is_none())
    );

    // The model was offered the plan tool and told about it.
    let sent = upstream.requests()[0].json();
    let tools: Vec<&str> = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"meta__update_task_plan"), "{tools:?}");
    assert!(
        sent["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("TASK PLAN (RUNTIME)")
    );

    // An agent without a task plan sends no task frames and no plan tool.
    *script.lock().unwrap() = vec![
        tool_call("c3", "catalog__get_product", &json!({"productId": deal})),
        text_answer("None."),
    ];
    let frames = chat(&app, &admin, "catalog.catalog_assistant").await;
    assert!(!frames.iter().any(|f| {
        f["type"]
            .as_str()
            .unwrap_or_default()
            .starts_with("data-agent")
    }));
    let sent = upstream.requests()[3].json();
    assert!(!sent.to_string().contains("meta__update_task_plan"));
    assert!(!sent.to_string().contains("TASK PLAN"));
}

#[actix_web::test]
async fn the_agent_writes_its_own_plan_through_the_meta_tool() {
    let (script, upstream) = queued();
    let app = start_with(openai(&upstream, &[])).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (deal, _, _) = deal_with_stages(&app, &admin).await;
    *script.lock().unwrap() = vec![
        tool_call(
            "p1",
            "meta__update_task_plan",
            &json!({"tasks": [
                {"id": "look", "label": "Look at the deal", "toolName": "customers.get_deal"},
                {"label": "<thinking>hidden</thinking>"},
                {"label": "Summarize it"},
            ]}),
        ),
        tool_call("c1", "customers__get_deal", &json!({"dealId": deal})),
        text_answer("Summary."),
    ];
    let frames = chat(&app, &admin, "customers.deal_analyzer").await;
    assert_eq!(
        sequence(&frames),
        [
            "start",
            "start-step",
            "tool-input-start",
            "tool-input-delta",
            "tool-input-delta",
            "plan:look:pending,agent-plan-3:pending",
            "tool-input-available",
            "tool-output-available",
            "finish-step",
            "start-step",
            "update:look:running",
            "tool-input-start",
            "tool-input-delta",
            "tool-input-delta",
            "update:look:running",
            "tool-input-available",
            "tool-output-available",
            "update:look:done",
            "finish-step",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "finish-step",
            "finish",
            "[DONE]",
            "loop-finish",
        ]
    );
    let plan = &frames[5];
    assert_eq!(plan["tasks"][0]["label"], "Look at the deal");
    assert_eq!(plan["tasks"][0]["source"], "agent");
    assert_eq!(plan["tasks"][1]["label"], "Summarize it");
    assert!(!plan.to_string().contains("hidden"));
    let done = &frames[17];
    assert_eq!(done["task"]["toolCallId"], "c1");
    assert_eq!(done["task"]["label"], "Look at the deal");
    // The model read a plain acknowledgement of its plan.
    let second = upstream.requests()[1].json();
    assert!(
        second["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| { m["role"] == "tool" && m["content"] == "Task plan updated." })
    );
}
