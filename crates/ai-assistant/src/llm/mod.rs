//! The model call of one loop step, streamed: OpenAI-compatible chat
//! completions (`stream: true`, `stream_options.include_usage`, `tools`)
//! and Anthropic messages, both read into one set of [`Delta`]s. A provider
//! from the environment is called through `Outbound::trusted()`, a base URL
//! that came from API input (a request or a tenant's settings) through
//! `guarded()`; every chunk must arrive within the provider timeout.

mod wire;

use wire::{anthropic_body, openai_body};
pub use wire::{anthropic_deltas, openai_deltas, take_events};

use serde_json::{Value, json};
use stoa_core::outbound::{Outbound, OutboundError, OutboundStream};

use crate::config::ProviderKind;
use crate::providers::Resolved;

/// One message of the conversation the loop keeps.
#[derive(Clone, Debug)]
pub enum Message {
    System(String),
    User(String),
    Assistant {
        text: String,
        tool_calls: Vec<ToolCallOut>,
    },
    Tool {
        call_id: String,
        content: String,
    },
}

/// A tool call the model made (sanitized name, arguments as JSON text).
#[derive(Clone, Debug, Default)]
pub struct ToolCallOut {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A tool offered to the model.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub schema: Value,
}

/// What a streamed chunk said.
#[derive(Clone, Debug, PartialEq)]
pub enum Delta {
    Text(String),
    ToolStart {
        index: usize,
        id: String,
        name: String,
    },
    ToolArgs {
        index: usize,
        delta: String,
    },
    Finish(String),
    Usage {
        input: u64,
        output: u64,
    },
}

/// Why a step failed.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error(transparent)]
    Outbound(#[from] OutboundError),
    #[error("the provider answered with status {0}")]
    Status(u16),
    #[error("the provider's stream is malformed")]
    Malformed,
}

/// Starts a step's request; the answer streams.
pub async fn start(
    outbound: &Outbound,
    resolved: &Resolved,
    messages: &[Message],
    tools: &[ToolSpec],
    timeout: std::time::Duration,
) -> Result<OutboundStream, LlmError> {
    let client = if resolved.base_url_from_input {
        outbound.guarded()
    } else {
        outbound.trusted()
    };
    let body = match resolved.provider.kind {
        ProviderKind::Anthropic => anthropic_body(resolved, messages, tools),
        _ => openai_body(resolved, messages, tools),
    };
    send(client, resolved, &body, timeout).await
}

/// Sends a request body to the provider's chat endpoint; the answer streams.
async fn send(
    client: &stoa_core::outbound::OutboundClient,
    resolved: &Resolved,
    body: &Value,
    timeout: std::time::Duration,
) -> Result<OutboundStream, LlmError> {
    let request = match resolved.provider.kind {
        ProviderKind::Anthropic => client
            .post(&format!("{}/messages", resolved.base_url))?
            .header("x-api-key", &resolved.api_key)
            .header("anthropic-version", "2023-06-01")
            .json(body),
        _ => client
            .post(&format!("{}/chat/completions", resolved.base_url))?
            .header("authorization", &format!("Bearer {}", resolved.api_key))
            .json(body),
    };
    let stream = request
        .first_byte_timeout(timeout)
        .idle_timeout(timeout)
        .send_streaming()
        .await?;
    if !stream.is_success() {
        return Err(LlmError::Status(stream.status));
    }
    Ok(stream)
}

/// One model call without tools, its streamed text collected (the legacy
/// intent router's classification).
pub async fn complete(
    outbound: &Outbound,
    resolved: &Resolved,
    messages: &[Message],
    timeout: std::time::Duration,
) -> Result<String, LlmError> {
    let mut stream = start(outbound, resolved, messages, &[], timeout).await?;
    let anthropic = resolved.provider.kind == ProviderKind::Anthropic;
    let mut buf = Vec::new();
    let mut text = String::new();
    while let Some(chunk) = stream.next_chunk().await? {
        buf.extend_from_slice(&chunk);
        for data in take_events(&mut buf) {
            if data == "[DONE]" {
                continue;
            }
            let deltas = if anthropic {
                anthropic_deltas(&data)?
            } else {
                openai_deltas(&data)?
            };
            for delta in deltas {
                if let Delta::Text(t) = delta {
                    text.push_str(&t);
                }
            }
        }
    }
    Ok(text)
}

/// An object agent's answer: the parsed object, why the model stopped and
/// its token usage.
#[derive(Debug)]
pub struct ObjectAnswer {
    pub object: Value,
    pub finish_reason: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// One structured answer matching `schema`: OpenAI-compatible providers get
/// `response_format: json_schema` and answer text; Anthropic is made to
/// call one tool whose input is the object (its way of structured output).
/// `Ok(Err(text))`: the answer was no JSON object.
pub async fn object(
    outbound: &Outbound,
    resolved: &Resolved,
    messages: &[Message],
    name: &str,
    schema: &Value,
    timeout: std::time::Duration,
) -> Result<Result<ObjectAnswer, String>, LlmError> {
    let client = if resolved.base_url_from_input {
        outbound.guarded()
    } else {
        outbound.trusted()
    };
    let anthropic = resolved.provider.kind == ProviderKind::Anthropic;
    let mut body = if anthropic {
        anthropic_body(
            resolved,
            messages,
            &[ToolSpec {
                name: name.to_string(),
                description: "Answer with the requested object.".into(),
                schema: schema.clone(),
            }],
        )
    } else {
        openai_body(resolved, messages, &[])
    };
    if let Some(map) = body.as_object_mut() {
        if anthropic {
            map.insert("tool_choice".into(), json!({"type": "tool", "name": name}));
        } else {
            map.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema}}),
            );
        }
    }
    let mut stream = send(client, resolved, &body, timeout).await?;
    let mut buf = Vec::new();
    let mut text = String::new();
    let mut finish = None;
    let (mut input_tokens, mut output_tokens) = (0, 0);
    while let Some(chunk) = stream.next_chunk().await? {
        buf.extend_from_slice(&chunk);
        for data in take_events(&mut buf) {
            if data == "[DONE]" {
                continue;
            }
            let deltas = if anthropic {
                anthropic_deltas(&data)?
            } else {
                openai_deltas(&data)?
            };
            for delta in deltas {
                match delta {
                    Delta::Text(t) if !anthropic => text.push_str(&t),
                    Delta::ToolArgs { delta, .. } if anthropic => text.push_str(&delta),
                    // Anthropic's forced tool call is how the object arrives.
                    Delta::Finish(reason) if anthropic && reason == "tool_calls" => {
                        finish = Some("stop".into());
                    }
                    Delta::Finish(reason) => finish = Some(reason),
                    Delta::Usage { input, output } => {
                        input_tokens += input;
                        output_tokens += output;
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(match serde_json::from_str::<Value>(text.trim()) {
        Ok(object) if object.is_object() => Ok(ObjectAnswer {
            object,
            finish_reason: finish.unwrap_or_else(|| "stop".into()),
            input_tokens,
            output_tokens,
        }),
        _ => Err(text),
    })
}

#[cfg(test)]
mod tests;
