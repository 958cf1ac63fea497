//! The loop a chat turn runs under: the agent's declaration, then the
//! tenant's stored loop override (the agent's row when it sets any loop
//! column, else the tenant-wide row), then the call's `loopBudget` preset.
//! The reference stores the override but never reads it; stoa applies it.

use diesel_async::AsyncPgConnection;
use serde_json::Value;
use stoa_acl::AuthContext;

use crate::agents::{self, AgentDef};
use crate::providers::{self, OverrideRow};

/// A condition that ends the loop after a step (OR-ed with the step limit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopWhen {
    /// Stop once this many steps ran.
    StepCount(u32),
    /// Stop after a step that called this tool (dotted name).
    HasToolCall(String),
}

/// The effective loop of one turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub max_steps: u32,
    pub max_tool_calls: Option<u32>,
    pub max_wall_clock_ms: Option<u64>,
    pub max_tokens: Option<u64>,
    pub stop_when: Vec<StopWhen>,
    /// Only these tools (dotted names) are offered; `None`: every tool.
    pub active_tools: Option<Vec<String>>,
    /// One step only.
    pub disabled: bool,
}

/// The loop columns of a stored override row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stored {
    pub disabled: Option<bool>,
    pub max_steps: Option<i32>,
    pub max_tool_calls: Option<i32>,
    pub max_wall_clock_ms: Option<i32>,
    pub max_tokens: Option<i32>,
    pub stop_when: Option<Value>,
    pub active_tools: Option<Value>,
}

impl Stored {
    fn of(row: OverrideRow) -> Option<Self> {
        let stored = Self {
            disabled: row.loop_disabled,
            max_steps: row.loop_max_steps,
            max_tool_calls: row.loop_max_tool_calls,
            max_wall_clock_ms: row.loop_max_wall_clock_ms,
            max_tokens: row.loop_max_tokens,
            stop_when: row.loop_stop_when_json,
            active_tools: row.loop_active_tools_json,
        };
        (stored != Self::default()).then_some(stored)
    }
}

/// A `loopBudget` preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    Tight,
    Default,
    Loose,
}

impl Preset {
    /// `tight`, `default` or `loose` (absent: `default`); `None` otherwise.
    pub fn parse(name: Option<&str>) -> Option<Self> {
        match name.unwrap_or("default") {
            "tight" => Some(Self::Tight),
            "default" => Some(Self::Default),
            "loose" => Some(Self::Loose),
            _ => None,
        }
    }
}

/// The tenant's stored loop override for `agent`: the agent's row when it
/// sets a loop column, else the tenant-wide row's. A lookup failure is
/// logged and reads as none (override lookups fail open, as the reference).
pub async fn stored(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    agent: &AgentDef,
) -> Option<Stored> {
    let tenant = ctx.tenant_id?;
    let org = ctx.organization_id();
    for scope in [Some(agent.id), None] {
        match providers::override_row(conn, tenant, org, scope).await {
            Ok(Some(row)) => {
                if let Some(stored) = Stored::of(row) {
                    return Some(stored);
                }
            }
            Ok(None) => {}
            Err(err) => {
                tracing::warn!(agent.id = agent.id, error = %err, "loop override not read");
                return None;
            }
        }
    }
    None
}

fn positive(value: Option<i32>) -> Option<u32> {
    value.and_then(|v| u32::try_from(v).ok()).filter(|v| *v > 0)
}

/// Stored stop conditions; an item that is not one of the two kinds is
/// skipped (the PUT refuses them, so only a hand-written row has them).
fn stop_conditions(value: &Value) -> Vec<StopWhen> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| match item["kind"].as_str() {
            Some("stepCount") => item["count"]
                .as_u64()
                .and_then(|c| u32::try_from(c).ok())
                .filter(|c| *c > 0)
                .map(StopWhen::StepCount),
            Some("hasToolCall") => item["toolName"]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(|t| StopWhen::HasToolCall(agents::dotted(t))),
            _ => None,
        })
        .collect()
}

/// Stored active tools, limited to the agent's allowed tools. A list that
/// named tools but none of this agent's (a tenant-wide row written for
/// another agent) is ignored; an empty list offers no tool.
fn active_tools(agent: &AgentDef, value: &Value) -> Option<Vec<String>> {
    let names: Vec<String> = value
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .map(agents::dotted)
        .collect();
    let kept: Vec<String> = names
        .iter()
        .filter(|n| agent.allowed_tools.contains(&n.as_str()))
        .cloned()
        .collect();
    (names.is_empty() || !kept.is_empty()).then_some(kept)
}

/// The effective loop: declaration < stored override < call preset.
pub fn effective(agent: &AgentDef, stored: Option<&Stored>, preset: Preset) -> Loop {
    let declared = agent.budget;
    let mut out = Loop {
        max_steps: declared.max_steps,
        max_tool_calls: declared.max_tool_calls,
        max_wall_clock_ms: declared.max_wall_clock_ms,
        max_tokens: declared.max_tokens,
        stop_when: declared
            .stop_on_tool
            .map(|t| StopWhen::HasToolCall(t.to_string()))
            .into_iter()
            .collect(),
        active_tools: None,
        disabled: false,
    };
    if let Some(s) = stored {
        if let Some(d) = s.disabled {
            out.disabled = d;
        }
        if let Some(v) = positive(s.max_steps) {
            out.max_steps = v;
        }
        if let Some(v) = positive(s.max_tool_calls) {
            out.max_tool_calls = Some(v);
        }
        if let Some(v) = positive(s.max_wall_clock_ms) {
            out.max_wall_clock_ms = Some(u64::from(v));
        }
        if let Some(v) = positive(s.max_tokens) {
            out.max_tokens = Some(u64::from(v));
        }
        if let Some(v) = &s.stop_when {
            out.stop_when = stop_conditions(v);
        }
        if let Some(v) = &s.active_tools {
            out.active_tools = active_tools(agent, v);
        }
    }
    match preset {
        Preset::Default => {}
        Preset::Tight => {
            out.max_steps = 3;
            out.max_tool_calls = Some(3);
            out.max_wall_clock_ms = Some(10_000);
            out.max_tokens = Some(50_000);
        }
        Preset::Loose => {
            out.max_steps = 20;
            out.max_tool_calls = Some(20);
            out.max_wall_clock_ms = Some(120_000);
            out.max_tokens = Some(500_000);
        }
    }
    if out.disabled {
        out.max_steps = 1;
    }
    out
}

/// Why the loop stopped before the model finished on its own (the usage
/// row's `loop_abort_reason`, the trace's `stopReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abort {
    StopCondition,
    MaxSteps,
    LoopDisabled,
    ToolCalls,
    Tokens,
    WallClock,
}

impl Abort {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::StopCondition => "stop-condition",
            Self::MaxSteps => "max-steps",
            Self::LoopDisabled => "loop-disabled",
            Self::ToolCalls => "budget-tool-calls",
            Self::Tokens => "budget-tokens",
            Self::WallClock => "budget-wall-clock",
        }
    }
}

/// Totals so far, checked after each step that called tools.
pub struct Progress<'a> {
    /// Steps run, this one included.
    pub steps: u32,
    pub tool_calls: u32,
    pub tokens: u64,
    pub elapsed_ms: u64,
    /// Dotted names of the tools this step called.
    pub called: &'a [String],
}

impl Loop {
    /// Whether the loop stops after a step that called tools (a step
    /// without tool calls ends the turn anyway).
    pub fn check(&self, p: &Progress<'_>) -> Option<Abort> {
        let condition = self.stop_when.iter().any(|c| match c {
            StopWhen::StepCount(n) => p.steps >= *n,
            StopWhen::HasToolCall(t) => p.called.iter().any(|c| c == t),
        });
        if condition {
            Some(Abort::StopCondition)
        } else if self.max_tool_calls.is_some_and(|m| p.tool_calls >= m) {
            Some(Abort::ToolCalls)
        } else if self.max_tokens.is_some_and(|m| p.tokens >= m) {
            Some(Abort::Tokens)
        } else if self.max_wall_clock_ms.is_some_and(|m| p.elapsed_ms >= m) {
            Some(Abort::WallClock)
        } else if p.steps >= self.max_steps {
            Some(if self.disabled {
                Abort::LoopDisabled
            } else {
                Abort::MaxSteps
            })
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn analyzer() -> &'static AgentDef {
        agents::agent("customers.deal_analyzer").unwrap_or(&agents::AGENTS[0])
    }

    #[test]
    fn layers_apply_in_order() {
        let agent = analyzer();
        let declared = effective(agent, None, Preset::Default);
        assert_eq!(declared.max_steps, 12);
        assert_eq!(declared.max_tool_calls, Some(12));
        assert_eq!(
            declared.stop_when,
            [StopWhen::HasToolCall("customers.update_deal_stage".into())]
        );
        let stored = Stored {
            max_steps: Some(2),
            max_tokens: Some(100),
            stop_when: Some(json!([{"kind": "stepCount", "count": 1}])),
            active_tools: Some(json!(["customers.get_deal"])),
            ..Stored::default()
        };
        let over = effective(agent, Some(&stored), Preset::Default);
        assert_eq!(over.max_steps, 2);
        assert_eq!(over.max_tokens, Some(100));
        assert_eq!(over.max_tool_calls, Some(12));
        assert_eq!(over.stop_when, [StopWhen::StepCount(1)]);
        assert_eq!(over.active_tools, Some(vec!["customers.get_deal".into()]));
        let loose = effective(agent, Some(&stored), Preset::Loose);
        assert_eq!(loose.max_steps, 20);
        assert_eq!(loose.max_tokens, Some(500_000));
        assert_eq!(loose.stop_when, [StopWhen::StepCount(1)]);
        let disabled = Stored {
            disabled: Some(true),
            ..Stored::default()
        };
        assert_eq!(
            effective(agent, Some(&disabled), Preset::Loose).max_steps,
            1
        );
        // A tenant-wide list naming none of this agent's tools is ignored.
        let foreign = Stored {
            active_tools: Some(json!(["catalog.get_product"])),
            ..Stored::default()
        };
        assert_eq!(
            effective(agent, Some(&foreign), Preset::Default).active_tools,
            None
        );
    }

    #[test]
    fn checks_name_the_first_limit_reached() {
        let l = Loop {
            max_steps: 5,
            max_tool_calls: Some(3),
            max_wall_clock_ms: Some(1000),
            max_tokens: Some(100),
            stop_when: vec![StopWhen::HasToolCall("a.b".into())],
            active_tools: None,
            disabled: false,
        };
        let p = |steps, tool_calls, tokens, elapsed_ms, called: &'static [String]| Progress {
            steps,
            tool_calls,
            tokens,
            elapsed_ms,
            called,
        };
        assert_eq!(l.check(&p(1, 1, 10, 10, &[])), None);
        assert_eq!(l.check(&p(1, 3, 10, 10, &[])), Some(Abort::ToolCalls));
        assert_eq!(l.check(&p(1, 1, 100, 10, &[])), Some(Abort::Tokens));
        assert_eq!(l.check(&p(1, 1, 10, 1000, &[])), Some(Abort::WallClock));
        assert_eq!(l.check(&p(5, 1, 10, 10, &[])), Some(Abort::MaxSteps));
    }
}
