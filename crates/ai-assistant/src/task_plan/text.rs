//! Tool names and free text as the plan shows them: normalized, labelled,
//! trimmed, and reasoning-like text refused.

use serde_json::Value;

use super::{ID_MAX, LABEL_MAX, TOOL, TOOL_NAME_MAX};

/// A tool name as the plan shows it: dotted, safe characters only.
pub fn normalize_tool(name: &str) -> Option<String> {
    let dotted = name.trim().replace("__", ".");
    let safe: String = dotted
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'))
        .take(TOOL_NAME_MAX)
        .collect();
    (!safe.is_empty()).then_some(safe)
}

/// Whether `name` (sanitized or dotted) is the meta tool.
pub fn is_meta(name: &str) -> bool {
    normalize_tool(name).as_deref() == Some(TOOL)
}

/// `customers__update_deal_stage` → `Customers · Update deal stage`.
pub fn label(tool: &str) -> String {
    if tool.is_empty() {
        return "Tool call".into();
    }
    let display = tool.replace("__", ".");
    let segments: Vec<&str> = display.split('.').collect();
    let last = segments.last().copied().unwrap_or(display.as_str());
    let humanized = last.replace('_', " ").trim().to_string();
    if humanized.is_empty() {
        return truncate(&display, LABEL_MAX);
    }
    let titled = capitalize(&humanized);
    if segments.len() <= 1 {
        return truncate(&titled, LABEL_MAX);
    }
    let module = capitalize(&segments[0].replace('_', " "));
    truncate(&format!("{module} · {titled}"), LABEL_MAX)
}

pub(super) fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub(super) fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// Text that reads like private reasoning never becomes a label.
pub(super) fn looks_like_reasoning(text: &str) -> bool {
    let lower = text.to_lowercase();
    let squeezed: String = lower.split_whitespace().collect::<Vec<_>>().join(" ");
    [
        "chain of thought",
        "chain-of-thought",
        "chainofthought",
        "internal reasoning",
        "internal thought",
        "private reasoning",
        "private thought",
        "hidden reasoning",
        "hidden thought",
        "scratchpad",
        "scratch pad",
        "reasoning:",
        "<thinking",
        "</thinking",
        "<thought",
        "</thought",
        "<reasoning",
        "</reasoning",
        "<scratchpad",
        "</scratchpad",
    ]
    .iter()
    .any(|p| squeezed.contains(p))
}

pub(super) fn clean_text(value: &Value, max: usize) -> Option<String> {
    let raw = value.as_str()?;
    let spaced: String = raw
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let normalized = spaced.split_whitespace().collect::<Vec<_>>().join(" ");
    if normalized.is_empty() || looks_like_reasoning(&normalized) {
        return None;
    }
    Some(truncate(&normalized, max))
}

pub(super) fn clean_id(value: &Value) -> Option<String> {
    let raw = value.as_str()?.trim();
    let id: String = raw
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'))
        .take(ID_MAX)
        .collect();
    (!id.is_empty()).then_some(id)
}
