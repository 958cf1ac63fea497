//! One step of the loop: a model call streamed to the client, and one tool
//! call run as the caller.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use stoa_core::http::SseSender;

use crate::llm::{self, Delta, ToolCallOut, ToolSpec};
use crate::task_plan::TaskPlan;
use crate::tools::{self, Ran};

use super::{Gone, Turn, send, send_all, until};

/// What one step produced.
#[derive(Default)]
pub(super) struct Step {
    pub(super) text: String,
    pub(super) calls: BTreeMap<usize, ToolCallOut>,
    pub(super) finish: Option<String>,
    pub(super) input_tokens: u64,
    pub(super) output_tokens: u64,
}

/// How a model call ended.
pub(super) enum StepEnd {
    Done(Step),
    /// The provider failed (the message is logged, never sent).
    Failed(String),
    /// The wall-clock budget ran out mid-call: what arrived so far (its
    /// unfinished tool calls are not run).
    OutOfTime(Step),
}

/// One model call, its text and tool-call frames sent as they stream.
/// `Err(Gone)`: the client left.
pub(super) async fn model_step(
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
pub(super) async fn run_tool(
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
