//! The chat loop: one model call per step, its tool calls run (reads) or
//! proposed (mutations: pending actions), results handed back, until a
//! tool-free answer, a stop condition or the budget. Frames follow the AI
//! SDK UI message stream v1 the reference emits, then `[DONE]`, then the
//! reference's `loop-finish` frame with the trace.

mod step;
mod usage;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use stoa_acl::{AiTool, AuthContext};
use stoa_core::db::Db;
use stoa_core::http::{SseEvent, SseSender};
use uuid::Uuid;

use crate::agents::{self, AgentDef};
use crate::llm::{Message, ToolCallOut, ToolSpec};
use crate::looping::{Abort, Loop, Progress};
use crate::providers::Resolved;
use crate::state::AiState;
use crate::task_plan::{self, TaskPlan};
use crate::transcript::{self, UserMessage};

use step::{StepEnd, model_step, run_tool};
pub(crate) use usage::{UsageStep, record_usage};

/// Everything a turn needs, owned (it runs in the stream's task).
pub struct Turn {
    pub db: Db,
    pub state: Arc<AiState>,
    pub ctx: AuthContext,
    pub agent: &'static AgentDef,
    pub resolved: Resolved,
    /// The tools offered (the gate's, narrowed to the loop's active tools).
    pub tools: Vec<AiTool>,
    pub messages: Vec<Message>,
    pub looping: Loop,
    pub session_id: Uuid,
    /// The conversation the turn is kept in, when the request named one.
    pub conversation: Option<Keep>,
}

/// What the turn keeps in its conversation.
pub struct Keep {
    pub key: String,
    pub page_context: Option<Value>,
    pub user_message: Option<UserMessage>,
}

/// The stream's end: the client went away.
struct Gone;

async fn send(tx: &SseSender, frame: Value) -> Result<(), Gone> {
    let event = SseEvent::json(&frame).map_err(|_| Gone)?;
    tx.send(event).await.map_err(|_| Gone)
}

async fn send_all(tx: &SseSender, frames: Vec<Value>) -> Result<(), Gone> {
    for frame in frames {
        send(tx, frame).await?;
    }
    Ok(())
}

/// Runs the turn, writing frames to `tx`; returns when done or when the
/// client went away (then the provider's stream is dropped, which closes
/// its connection).
pub async fn run(turn: Turn, tx: SseSender) {
    let _ = run_frames(turn, &tx).await;
}

async fn run_frames(mut turn: Turn, tx: &SseSender) -> Result<(), Gone> {
    let started = Instant::now();
    let deadline = turn
        .looping
        .max_wall_clock_ms
        .map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms));
    let turn_id = Uuid::new_v4();
    let text_id = format!("t{}", &turn_id.simple().to_string()[..8]);
    let mut specs: Vec<ToolSpec> = turn
        .tools
        .iter()
        .map(|t| ToolSpec {
            name: agents::sanitized(t.name),
            description: t.description.into(),
            schema: (t.input_schema)(),
        })
        .collect();
    let mut plan = turn.agent.task_plan.then(|| TaskPlan::new(turn_id));
    if plan.is_some() {
        specs.push(ToolSpec {
            name: agents::sanitized(task_plan::TOOL),
            description: "Show the person the steps you are about to take (2-5 short, user-visible labels; name the tool a step uses in toolName).".into(),
            schema: task_plan::schema(),
        });
    }
    let transcript = match turn.conversation.take() {
        Some(keep) => {
            transcript::open(
                &turn.db,
                &turn.ctx,
                turn.agent.id,
                &keep.key,
                keep.page_context,
                keep.user_message,
            )
            .await
        }
        None => None,
    };
    let mut answer = String::new();
    let mut ui_parts = Vec::new();
    send(tx, json!({"type": "start"})).await?;
    let mut trace_steps = Vec::new();
    let mut tool_calls_total: u32 = 0;
    let mut tokens_total: u64 = 0;
    let mut total_in = 0;
    let mut total_out = 0;
    let mut stop_reason = "finish-reason";
    let mut finish_reason = "stop".to_string();
    for step_index in 0..turn.looping.max_steps {
        send(tx, json!({"type": "start-step"})).await?;
        let (step, cut) = match model_step(
            &turn, &specs, tx, &text_id, step_index, deadline, &mut plan,
        )
        .await?
        {
            StepEnd::Done(step) => (step, false),
            StepEnd::OutOfTime(step) => (step, true),
            StepEnd::Failed(message) => {
                tracing::warn!(agent.id = turn.agent.id, error = %message, "ai provider step failed");
                send(
                    tx,
                    json!({"type": "error", "errorText": "An error occurred."}),
                )
                .await?;
                finish_reason = "error".into();
                stop_reason = "error";
                break;
            }
        };
        answer.push_str(&step.text);
        total_in += step.input_tokens;
        total_out += step.output_tokens;
        tokens_total += step.input_tokens + step.output_tokens;
        let mut step_trace = Vec::new();
        let calls: Vec<ToolCallOut> = if cut {
            Vec::new()
        } else {
            step.calls.values().cloned().collect()
        };
        let mut called = Vec::new();
        if cut {
            // Tool calls the model had started are not run; each still ends,
            // so the client sees no call left open.
            for call in step.calls.values() {
                let message = "The loop's wall-clock budget ran out before the call was complete.";
                send(tx, json!({"type": "tool-output-error", "toolCallId": call.id, "errorText": message, "dynamic": true})).await?;
                if let Some(plan) = plan.as_mut() {
                    send_all(tx, plan.finished(&call.id, false)).await?;
                }
                step_trace.push(json!({"toolName": agents::dotted(&call.name), "args": Value::Null, "error": {"code": Abort::WallClock.as_str(), "message": message}, "repairAttempted": false, "durationMs": 0}));
            }
        }
        for call in &calls {
            let dotted = agents::dotted(&call.name);
            let input: Value = serde_json::from_str(if call.arguments.trim().is_empty() {
                "{}"
            } else {
                &call.arguments
            })
            .unwrap_or(Value::Null);
            if let Some(plan) = plan.as_mut() {
                send_all(tx, plan.running(&call.id, &call.name, Some(&input))).await?;
            }
            send(tx, json!({"type": "tool-input-available", "toolCallId": call.id, "toolName": call.name, "input": input, "dynamic": true})).await?;
            let call_started = Instant::now();
            let outcome = if plan.is_some() && task_plan::is_meta(&call.name) {
                Ok(("Task plan updated.".to_string(), None))
            } else {
                run_tool(&turn, &dotted, input.clone()).await
            };
            tool_calls_total += 1;
            let content = match &outcome {
                Ok((output, card)) => {
                    ui_parts.extend(card.clone());
                    send(tx, json!({"type": "tool-output-available", "toolCallId": call.id, "output": output, "dynamic": true})).await?;
                    step_trace.push(json!({"toolName": dotted, "args": input, "result": output, "repairAttempted": false, "durationMs": call_started.elapsed().as_millis() as u64}));
                    output.clone()
                }
                Err((code, message)) => {
                    send(tx, json!({"type": "tool-output-error", "toolCallId": call.id, "errorText": message, "dynamic": true})).await?;
                    step_trace.push(json!({"toolName": dotted, "args": input, "error": {"code": code, "message": message}, "repairAttempted": false, "durationMs": call_started.elapsed().as_millis() as u64}));
                    format!("Error: {message}")
                }
            };
            if let Some(plan) = plan.as_mut() {
                send_all(tx, plan.finished(&call.id, outcome.is_ok())).await?;
            }
            called.push(dotted);
            turn.messages.push(Message::Tool {
                call_id: call.id.clone(),
                content,
            });
        }
        if !calls.is_empty() {
            // The assistant's tool calls precede their results.
            let at = turn.messages.len() - calls.len();
            turn.messages.insert(
                at,
                Message::Assistant {
                    text: step.text.clone(),
                    tool_calls: calls.clone(),
                },
            );
        }
        send(tx, json!({"type": "finish-step"})).await?;
        finish_reason = if cut {
            "other".into()
        } else {
            step.finish.clone().unwrap_or_else(|| "stop".into())
        };
        let abort = if cut {
            Some(Abort::WallClock)
        } else if calls.is_empty() {
            None
        } else {
            turn.looping.check(&Progress {
                steps: step_index + 1,
                tool_calls: tool_calls_total,
                tokens: tokens_total,
                elapsed_ms: started.elapsed().as_millis() as u64,
                called: &called,
            })
        };
        record_usage(
            &turn.db,
            &turn.ctx,
            turn.agent,
            UsageStep {
                session_id: turn.session_id,
                turn_id,
                step_index,
                provider_id: turn.resolved.provider.id,
                model: &turn.resolved.model,
                input_tokens: step.input_tokens,
                output_tokens: step.output_tokens,
                finish_reason: step.finish.as_deref(),
                abort: abort.map(Abort::as_str),
            },
        )
        .await;
        trace_steps.push(json!({
            "stepIndex": step_index,
            "modelId": turn.resolved.model,
            "toolCalls": step_trace,
            "textDelta": step.text,
            "usage": {"inputTokens": step.input_tokens, "outputTokens": step.output_tokens},
            "finishReason": finish_reason,
        }));
        if let Some(abort) = abort {
            stop_reason = abort.as_str();
            break;
        }
        if calls.is_empty() {
            break;
        }
    }
    // Kept before the stream ends, so a client that read it all finds it.
    if let Some(kept) = &transcript {
        transcript::finish(
            &turn.db,
            &turn.ctx,
            kept,
            &answer,
            ui_parts,
            &turn.resolved.model,
            turn_id,
        )
        .await;
    }
    send(tx, json!({"type": "finish", "finishReason": finish_reason})).await?;
    tx.send(SseEvent::data("[DONE]")).await.map_err(|_| Gone)?;
    send(
        tx,
        json!({"type": "loop-finish", "trace": {
            "agentId": turn.agent.id,
            "sessionId": turn.session_id,
            "turnId": turn_id,
            "steps": trace_steps,
            "stopReason": stop_reason,
            "totalDurationMs": started.elapsed().as_millis() as u64,
            "totalUsage": {"inputTokens": total_in, "outputTokens": total_out},
        }}),
    )
    .await
}

/// Waits for `deadline` (forever without one).
async fn until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
