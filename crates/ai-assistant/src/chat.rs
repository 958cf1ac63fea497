//! The chat loop: one model call per step, its tool calls run (reads) or
//! proposed (mutations: pending actions), results handed back, until a
//! tool-free answer, a stop condition or the budget. Frames follow the AI
//! SDK UI message stream v1 the reference emits, then `[DONE]`, then the
//! reference's `loop-finish` frame with the trace.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_acl::{AiTool, AuthContext};
use stoa_core::db::Db;
use stoa_core::http::{SseEvent, SseSender};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::agents::{self, AgentDef, LoopBudget};
use crate::llm::{self, Delta, Message, ToolCallOut, ToolSpec};
use crate::providers::Resolved;
use crate::schema::{ai_token_usage_daily as ud, ai_token_usage_events as ue};
use crate::state::AiState;
use crate::tools::{self, Ran};
use crate::transcript::{self, UserMessage};

/// Everything a turn needs, owned (it runs in the stream's task).
pub struct Turn {
    pub db: Db,
    pub state: Arc<AiState>,
    pub ctx: AuthContext,
    pub agent: &'static AgentDef,
    pub resolved: Resolved,
    pub tools: Vec<AiTool>,
    pub messages: Vec<Message>,
    pub budget: LoopBudget,
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

/// The loop budget a `loopBudget` preset names.
pub fn preset(agent: &AgentDef, name: Option<&str>) -> Option<LoopBudget> {
    match name.unwrap_or("default") {
        "default" => Some(agent.budget),
        "tight" => Some(LoopBudget {
            max_steps: 3,
            max_tool_calls: Some(3),
            max_wall_clock_ms: Some(10_000),
            max_tokens: Some(50_000),
            stop_on_tool: agent.budget.stop_on_tool,
        }),
        "loose" => Some(LoopBudget {
            max_steps: 20,
            max_tool_calls: Some(20),
            max_wall_clock_ms: Some(120_000),
            max_tokens: Some(500_000),
            stop_on_tool: agent.budget.stop_on_tool,
        }),
        _ => None,
    }
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

/// Runs the turn, writing frames to `tx`; returns when done or when the
/// client went away (then the provider's stream is dropped, which closes
/// its connection).
pub async fn run(turn: Turn, tx: SseSender) {
    let _ = run_frames(turn, &tx).await;
}

async fn run_frames(mut turn: Turn, tx: &SseSender) -> Result<(), Gone> {
    let started = Instant::now();
    let turn_id = Uuid::new_v4();
    let text_id = format!("t{}", &turn_id.simple().to_string()[..8]);
    let specs: Vec<ToolSpec> = turn
        .tools
        .iter()
        .map(|t| ToolSpec {
            name: agents::sanitized(t.name),
            description: t.description.into(),
            schema: (t.input_schema)(),
        })
        .collect();
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
    for step_index in 0..turn.budget.max_steps {
        send(tx, json!({"type": "start-step"})).await?;
        let step = match model_step(&turn, &specs, tx, &text_id, step_index).await? {
            Ok(step) => step,
            Err(message) => {
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
        let calls: Vec<ToolCallOut> = step.calls.values().cloned().collect();
        let mut stop_on_tool = false;
        for call in &calls {
            let dotted = agents::dotted(&call.name);
            let input: Value = serde_json::from_str(if call.arguments.trim().is_empty() {
                "{}"
            } else {
                &call.arguments
            })
            .unwrap_or(Value::Null);
            send(tx, json!({"type": "tool-input-available", "toolCallId": call.id, "toolName": call.name, "input": input, "dynamic": true})).await?;
            let call_started = Instant::now();
            let outcome = run_tool(&turn, &dotted, input.clone()).await;
            tool_calls_total += 1;
            if turn.budget.stop_on_tool == Some(dotted.as_str()) {
                stop_on_tool = true;
            }
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
        finish_reason = step.finish.clone().unwrap_or_else(|| "stop".into());
        record_usage(&turn, turn_id, step_index, &step, None).await;
        trace_steps.push(json!({
            "stepIndex": step_index,
            "modelId": turn.resolved.model,
            "toolCalls": step_trace,
            "textDelta": step.text,
            "usage": {"inputTokens": step.input_tokens, "outputTokens": step.output_tokens},
            "finishReason": finish_reason,
        }));
        if calls.is_empty() {
            break;
        }
        if stop_on_tool {
            stop_reason = "stop-condition";
            break;
        }
        if turn
            .budget
            .max_tool_calls
            .is_some_and(|m| tool_calls_total >= m)
        {
            stop_reason = "budget-tool-calls";
            break;
        }
        if turn.budget.max_tokens.is_some_and(|m| tokens_total >= m) {
            stop_reason = "budget-tokens";
            break;
        }
        if turn
            .budget
            .max_wall_clock_ms
            .is_some_and(|m| started.elapsed().as_millis() as u64 >= m)
        {
            stop_reason = "budget-wall-clock";
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

/// One model call, its text and tool-call frames sent as they stream.
/// `Err(Gone)`: the client left; `Ok(Err(message))`: the provider failed.
async fn model_step(
    turn: &Turn,
    specs: &[ToolSpec],
    tx: &SseSender,
    text_id: &str,
    step_index: u32,
) -> Result<Result<Step, String>, Gone> {
    let timeout = turn.state.config.provider_timeout;
    let mut stream = match llm::start(
        &turn.state.outbound,
        &turn.resolved,
        &turn.messages,
        specs,
        timeout,
    )
    .await
    {
        Ok(s) => s,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let anthropic = turn.resolved.provider.kind == crate::config::ProviderKind::Anthropic;
    let mut step = Step::default();
    let mut buf = Vec::new();
    let mut text_open = false;
    let text_part = format!("{text_id}-{step_index}");
    loop {
        let chunk = tokio::select! {
            chunk = stream.next_chunk() => chunk,
            () = tx.closed() => return Err(Gone),
        };
        let chunk = match chunk {
            Ok(Some(c)) => c,
            Ok(None) => break,
            Err(e) => return Ok(Err(e.to_string())),
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
                Err(e) => return Ok(Err(e.to_string())),
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
    Ok(Ok(step))
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

/// One usage row per step and the daily rollup (failures are logged, never
/// fail the turn).
async fn record_usage(
    turn: &Turn,
    turn_id: Uuid,
    step_index: u32,
    step: &Step,
    abort: Option<&str>,
) {
    let Some(tenant) = turn.ctx.tenant_id else {
        return;
    };
    let org = turn.ctx.organization_id();
    let result: Result<(), diesel::result::Error> = async {
        let mut conn = turn
            .db
            .conn()
            .await
            .map_err(|e| diesel::result::Error::QueryBuilderError(e.to_string().into()))?;
        let input = i64::try_from(step.input_tokens).unwrap_or(i64::MAX);
        let output = i64::try_from(step.output_tokens).unwrap_or(i64::MAX);
        diesel::insert_into(ue::table)
            .values((
                ue::id.eq(Uuid::new_v4()),
                ue::tenant_id.eq(tenant),
                ue::organization_id.eq(org),
                ue::user_id.eq(turn.ctx.user_id),
                ue::agent_id.eq(turn.agent.id),
                ue::module_id.eq(turn.agent.module_id),
                ue::session_id.eq(turn.session_id),
                ue::turn_id.eq(turn_id),
                ue::step_index.eq(i32::try_from(step_index).unwrap_or(i32::MAX)),
                ue::provider_id.eq(turn.resolved.provider.id),
                ue::model_id.eq(&turn.resolved.model),
                ue::input_tokens.eq(input),
                ue::output_tokens.eq(output),
                ue::finish_reason.eq(&step.finish),
                ue::loop_abort_reason.eq(abort),
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
                ud::agent_id.eq(turn.agent.id),
                ud::model_id.eq(&turn.resolved.model),
                ud::provider_id.eq(turn.resolved.provider.id),
                ud::input_tokens.eq(input),
                ud::output_tokens.eq(output),
                ud::step_count.eq(1_i64),
                ud::turn_count.eq(i64::from(step_index == 0)),
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
                ud::turn_count.eq(ud::turn_count + i64::from(step_index == 0)),
                ud::updated_at.eq(OffsetDateTime::now_utc()),
            ))
            .execute(&mut *conn)
            .await?;
        Ok(())
    }
    .await;
    if let Err(err) = result {
        tracing::warn!(agent.id = turn.agent.id, error = %err, "ai usage row not written");
    }
}
