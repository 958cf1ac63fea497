//! The chat loop: one model call per step, its tool calls run (reads) or
//! proposed (mutations: pending actions), results handed back, until a
//! tool-free answer, a stop condition or the budget. Frames follow the AI
//! SDK UI message stream v1 the reference emits, then `[DONE]`, then the
//! reference's `loop-finish` frame with the trace.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_acl::{AiTool, AuthContext};
use stoa_core::db::Db;
use stoa_core::http::{SseEvent, SseSender};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::agents::{self, AgentDef};
use crate::llm::{self, Delta, Message, ToolCallOut, ToolSpec};
use crate::looping::{Abort, Loop, Progress};
use crate::providers::Resolved;
use crate::schema::{ai_token_usage_daily as ud, ai_token_usage_events as ue};
use crate::state::AiState;
use crate::task_plan::{self, TaskPlan};
use crate::tools::{self, Ran};
use crate::transcript::{self, UserMessage};

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

/// What one step produced.
#[derive(Default)]
struct Step {
    text: String,
    calls: BTreeMap<usize, ToolCallOut>,
    finish: Option<String>,
    input_tokens: u64,
    output_tokens: u64,
}

/// How a model call ended.
enum StepEnd {
    Done(Step),
    /// The provider failed (the message is logged, never sent).
    Failed(String),
    /// The wall-clock budget ran out mid-call: what arrived so far (its
    /// unfinished tool calls are not run).
    OutOfTime(Step),
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

/// One model call, its text and tool-call frames sent as they stream.
/// `Err(Gone)`: the client left.
async fn model_step(
    turn: &Turn,
    specs: &[ToolSpec],
    tx: &SseSender,
    text_id: &str,
    step_index: u32,
    deadline: Option<tokio::time::Instant>,
    plan: &mut Option<TaskPlan>,
) -> Result<StepEnd, Gone> {
    let timeout = turn.state.config.provider_timeout;
    let started = tokio::select! {
        started = llm::start(
            &turn.state.outbound,
            &turn.resolved,
            &turn.messages,
            specs,
            timeout,
        ) => started,
        () = until(deadline) => return Ok(StepEnd::OutOfTime(Step::default())),
        () = tx.closed() => return Err(Gone),
    };
    let mut stream = match started {
        Ok(s) => s,
        Err(e) => return Ok(StepEnd::Failed(e.to_string())),
    };
    let anthropic = turn.resolved.provider.kind == crate::config::ProviderKind::Anthropic;
    let mut step = Step::default();
    let mut buf = Vec::new();
    let mut text_open = false;
    let text_part = format!("{text_id}-{step_index}");
    loop {
        let chunk = tokio::select! {
            chunk = stream.next_chunk() => chunk,
            () = until(deadline) => {
                if text_open {
                    send(tx, json!({"type": "text-end", "id": text_part})).await?;
                }
                return Ok(StepEnd::OutOfTime(step));
            }
            () = tx.closed() => return Err(Gone),
        };
        let chunk = match chunk {
            Ok(Some(c)) => c,
            Ok(None) => break,
            Err(e) => return Ok(StepEnd::Failed(e.to_string())),
        };
        buf.extend_from_slice(&chunk);
        for data in llm::take_events(&mut buf) {
            if data == "[DONE]" {
                continue;
            }
            let deltas = if anthropic {
                llm::anthropic_deltas(&data)
            } else {
                llm::openai_deltas(&data)
            };
            let deltas = match deltas {
                Ok(d) => d,
                Err(e) => return Ok(StepEnd::Failed(e.to_string())),
            };
            for delta in deltas {
                match delta {
                    Delta::Text(t) => {
                        if !text_open {
                            send(tx, json!({"type": "text-start", "id": text_part})).await?;
                            text_open = true;
                        }
                        send(
                            tx,
                            json!({"type": "text-delta", "id": text_part, "delta": t}),
                        )
                        .await?;
                        step.text.push_str(&t);
                    }
                    Delta::ToolStart { index, id, name } => {
                        let id = if id.is_empty() {
                            format!("call_{step_index}_{index}")
                        } else {
                            id
                        };
                        if let Some(plan) = plan.as_mut() {
                            send_all(tx, plan.running(&id, &name, None)).await?;
                        }
                        send(tx, json!({"type": "tool-input-start", "toolCallId": id, "toolName": name, "dynamic": true})).await?;
                        step.calls.insert(
                            index,
                            ToolCallOut {
                                id,
                                name,
                                arguments: String::new(),
                            },
                        );
                    }
                    Delta::ToolArgs { index, delta } => {
                        if let Some(call) = step.calls.get_mut(&index) {
                            send(tx, json!({"type": "tool-input-delta", "toolCallId": call.id, "inputTextDelta": delta})).await?;
                            call.arguments.push_str(&delta);
                        }
                    }
                    Delta::Finish(reason) => step.finish = Some(reason),
                    Delta::Usage { input, output } => {
                        step.input_tokens += input;
                        step.output_tokens += output;
                    }
                }
            }
        }
    }
    if text_open {
        send(tx, json!({"type": "text-end", "id": text_part})).await?;
    }
    Ok(StepEnd::Done(step))
}

/// Runs (a read) or proposes (a mutation) a tool the model called; the
/// result as the string handed back to the model, and a proposal's
/// mutation card for the transcript.
async fn run_tool(
    turn: &Turn,
    name: &str,
    input: Value,
) -> Result<(String, Option<Value>), (String, String)> {
    let Some(tool) = turn.tools.iter().find(|t| t.name == name) else {
        return Err((
            "tool_not_available".into(),
            format!("Tool {name} is not available"),
        ));
    };
    let input = tools::normalize(input);
    let session = turn.session_id.to_string();
    match tools::run_for_agent(
        &turn.db,
        &turn.state,
        &turn.ctx,
        turn.agent,
        tool,
        input,
        Some(&session),
    )
    .await
    {
        Ok(Ran::Read(value)) => Ok((
            if value.is_null() {
                "No result returned".into()
            } else {
                serde_json::to_string_pretty(&value).unwrap_or_default()
            },
            None,
        )),
        Ok(Ran::Proposed(row)) => {
            let proposal = crate::actions::proposal_result(&row);
            Ok((
                serde_json::to_string_pretty(&proposal).unwrap_or_default(),
                Some(json!({"componentId": "mutation-preview-card", "props": proposal})),
            ))
        }
        Err(err) => Err((
            err.code().unwrap_or("tool_error").to_string(),
            err.message().to_string(),
        )),
    }
}

/// One step's usage.
pub(crate) struct UsageStep<'a> {
    pub session_id: Uuid,
    pub turn_id: Uuid,
    pub step_index: u32,
    pub provider_id: &'a str,
    pub model: &'a str,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub finish_reason: Option<&'a str>,
    /// Why the loop stopped after this step, when a limit stopped it.
    pub abort: Option<&'a str>,
}

/// One usage row per step and the daily rollup (failures are logged, never
/// fail the turn).
pub(crate) async fn record_usage(
    db: &Db,
    ctx: &AuthContext,
    agent: &AgentDef,
    step: UsageStep<'_>,
) {
    let Some(tenant) = ctx.tenant_id else {
        return;
    };
    let org = ctx.organization_id();
    let result: Result<(), diesel::result::Error> = async {
        let mut conn = db
            .conn()
            .await
            .map_err(|e| diesel::result::Error::QueryBuilderError(e.to_string().into()))?;
        let input = i64::try_from(step.input_tokens).unwrap_or(i64::MAX);
        let output = i64::try_from(step.output_tokens).unwrap_or(i64::MAX);
        let first = i64::from(step.step_index == 0);
        diesel::insert_into(ue::table)
            .values((
                ue::id.eq(Uuid::new_v4()),
                ue::tenant_id.eq(tenant),
                ue::organization_id.eq(org),
                ue::user_id.eq(ctx.user_id),
                ue::agent_id.eq(agent.id),
                ue::module_id.eq(agent.module_id),
                ue::session_id.eq(step.session_id),
                ue::turn_id.eq(step.turn_id),
                ue::step_index.eq(i32::try_from(step.step_index).unwrap_or(i32::MAX)),
                ue::provider_id.eq(step.provider_id),
                ue::model_id.eq(step.model),
                ue::input_tokens.eq(input),
                ue::output_tokens.eq(output),
                ue::finish_reason.eq(step.finish_reason),
                ue::loop_abort_reason.eq(step.abort),
            ))
            .execute(&mut *conn)
            .await?;
        let day = OffsetDateTime::now_utc().date();
        diesel::insert_into(ud::table)
            .values((
                ud::id.eq(Uuid::new_v4()),
                ud::tenant_id.eq(tenant),
                ud::organization_id.eq(org),
                ud::day.eq(day),
                ud::agent_id.eq(agent.id),
                ud::model_id.eq(step.model),
                ud::provider_id.eq(step.provider_id),
                ud::input_tokens.eq(input),
                ud::output_tokens.eq(output),
                ud::step_count.eq(1_i64),
                ud::turn_count.eq(first),
                ud::session_count.eq(0_i64),
            ))
            .on_conflict((
                ud::tenant_id,
                ud::day,
                ud::agent_id,
                ud::model_id,
                ud::organization_id,
            ))
            .do_update()
            .set((
                ud::input_tokens.eq(ud::input_tokens + input),
                ud::output_tokens.eq(ud::output_tokens + output),
                ud::step_count.eq(ud::step_count + 1_i64),
                ud::turn_count.eq(ud::turn_count + first),
                ud::updated_at.eq(OffsetDateTime::now_utc()),
            ))
            .execute(&mut *conn)
            .await?;
        Ok(())
    }
    .await;
    if let Err(err) = result {
        tracing::warn!(agent.id = agent.id, error = %err, "ai usage row not written");
    }
}
