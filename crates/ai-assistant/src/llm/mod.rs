//! The model call of one loop step, streamed: OpenAI-compatible chat
//! completions (`stream: true`, `stream_options.include_usage`, `tools`)
//! and Anthropic messages, both read into one set of [`Delta`]s. A provider
//! from the environment is called through `Outbound::trusted()`, a base URL
//! that came from API input (a request or a tenant's settings) through
//! `guarded()`; every chunk must arrive within the provider timeout.

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

fn openai_body(resolved: &Resolved, messages: &[Message], tools: &[ToolSpec]) -> Value {
    let messages: Vec<Value> = messages
        .iter()
        .map(|m| match m {
            Message::System(t) => json!({"role": "system", "content": t}),
            Message::User(t) => json!({"role": "user", "content": t}),
            Message::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            Message::Assistant { text, tool_calls } => json!({
                "role": "assistant",
                "content": if text.is_empty() { Value::Null } else { Value::String(text.clone()) },
                "tool_calls": tool_calls.iter().map(|c| json!({
                    "id": c.id, "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                })).collect::<Vec<_>>(),
            }),
            Message::Tool { call_id, content } => {
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        })
        .collect();
    let mut body = json!({
        "model": resolved.model,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": messages,
    });
    if !tools.is_empty()
        && let Some(map) = body.as_object_mut()
    {
        map.insert(
            "tools".into(),
            tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.schema,
                    }})
                })
                .collect(),
        );
    }
    body
}

fn anthropic_body(resolved: &Resolved, messages: &[Message], tools: &[ToolSpec]) -> Value {
    let system: Vec<&str> = messages
        .iter()
        .filter_map(|m| match m {
            Message::System(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let mut out: Vec<Value> = Vec::new();
    for m in messages {
        let item = match m {
            Message::System(_) => continue,
            Message::User(t) => json!({"role": "user", "content": t}),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    let input: Value =
                        serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
                json!({"role": "assistant", "content": blocks})
            }
            Message::Tool { call_id, content } => json!({
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": content}],
            }),
        };
        out.push(item);
    }
    let mut body = json!({
        "model": resolved.model,
        "max_tokens": 4096,
        "stream": true,
        "system": system.join("\n\n"),
        "messages": out,
    });
    if !tools.is_empty()
        && let Some(map) = body.as_object_mut()
    {
        map.insert(
            "tools".into(),
            tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.schema}))
                .collect(),
        );
    }
    body
}

/// The deltas of one OpenAI `data:` payload.
pub fn openai_deltas(data: &str) -> Result<Vec<Delta>, LlmError> {
    let v: Value = serde_json::from_str(data).map_err(|_| LlmError::Malformed)?;
    let mut out = Vec::new();
    for choice in v["choices"].as_array().into_iter().flatten() {
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str()
            && !text.is_empty()
        {
            out.push(Delta::Text(text.into()));
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap_or(0) as usize;
            if let Some(name) = call["function"]["name"].as_str() {
                out.push(Delta::ToolStart {
                    index,
                    id: call["id"].as_str().unwrap_or_default().to_string(),
                    name: name.into(),
                });
            }
            if let Some(args) = call["function"]["arguments"].as_str()
                && !args.is_empty()
            {
                out.push(Delta::ToolArgs {
                    index,
                    delta: args.into(),
                });
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            out.push(Delta::Finish(reason.into()));
        }
    }
    if v["usage"].is_object() {
        out.push(Delta::Usage {
            input: v["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
            output: v["usage"]["completion_tokens"].as_u64().unwrap_or(0),
        });
    }
    Ok(out)
}

/// The deltas of one Anthropic event payload.
pub fn anthropic_deltas(data: &str) -> Result<Vec<Delta>, LlmError> {
    let v: Value = serde_json::from_str(data).map_err(|_| LlmError::Malformed)?;
    let index = v["index"].as_u64().unwrap_or(0) as usize;
    Ok(match v["type"].as_str() {
        Some("message_start") => vec![Delta::Usage {
            input: v["message"]["usage"]["input_tokens"].as_u64().unwrap_or(0),
            output: 0,
        }],
        Some("content_block_start") if v["content_block"]["type"] == "tool_use" => {
            vec![Delta::ToolStart {
                index,
                id: v["content_block"]["id"].as_str().unwrap_or_default().into(),
                name: v["content_block"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .into(),
            }]
        }
        Some("content_block_delta") => match v["delta"]["type"].as_str() {
            Some("text_delta") => vec![Delta::Text(
                v["delta"]["text"].as_str().unwrap_or_default().into(),
            )],
            Some("input_json_delta") => vec![Delta::ToolArgs {
                index,
                delta: v["delta"]["partial_json"]
                    .as_str()
                    .unwrap_or_default()
                    .into(),
            }],
            _ => Vec::new(),
        },
        Some("message_delta") => {
            let mut out = vec![Delta::Usage {
                input: 0,
                output: v["usage"]["output_tokens"].as_u64().unwrap_or(0),
            }];
            if let Some(reason) = v["delta"]["stop_reason"].as_str() {
                out.push(Delta::Finish(
                    match reason {
                        "tool_use" => "tool_calls",
                        "max_tokens" => "length",
                        "end_turn" | "stop_sequence" => "stop",
                        other => other,
                    }
                    .into(),
                ));
            }
            out
        }
        Some("error") => return Err(LlmError::Malformed),
        _ => Vec::new(),
    })
}

/// Splits a byte buffer into complete SSE `data:` payloads (the rest stays
/// in `buf` for the next chunk).
pub fn take_events(buf: &mut Vec<u8>) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
        let line: Vec<u8> = buf.drain(..=pos).collect();
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\n', '\r']);
        if let Some(data) = line.strip_prefix("data:") {
            out.push(data.trim_start().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests;
