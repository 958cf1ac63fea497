//! The providers' wire formats: request bodies (OpenAI-compatible and
//! Anthropic) and their streamed answers read back as deltas.

use serde_json::{Value, json};

use crate::providers::Resolved;

use super::{Delta, LlmError, Message, ToolSpec};

pub(super) fn openai_body(resolved: &Resolved, messages: &[Message], tools: &[ToolSpec]) -> Value {
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

pub(super) fn anthropic_body(
    resolved: &Resolved,
    messages: &[Message],
    tools: &[ToolSpec],
) -> Value {
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
