//! The visible task plan of an agent with `taskPlan{enabled}` (the
//! reference's task-plan stream): `data-agent-task-plan` (the whole plan,
//! first) and `data-agent-task-update` (one task) frames beside the tool
//! frames, `planId = "turn_<turnId>"`. Running frames go before
//! `tool-input-start` and `tool-input-available`, done or failed frames
//! after `tool-output-available` / `tool-output-error`. A runtime task is
//! one tool call, labelled `"<Module> · <Humanized action>"`; the model may
//! replace the plan with its own steps through `meta.update_task_plan`,
//! whose labels are cleaned and which advance as the tools they name run.

mod text;

use text::{clean_id, clean_text};
pub use text::{is_meta, label, normalize_tool};

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

/// The reserved tool through which the model writes its own plan.
pub const TOOL: &str = "meta.update_task_plan";
const MAX_TASKS: usize = 8;
const LABEL_MAX: usize = 80;
const DETAIL_MAX: usize = 160;
const ID_MAX: usize = 80;
const TOOL_NAME_MAX: usize = 160;

/// The prompt block a task-plan agent's system prompt gets (as the
/// reference's runtime section).
pub const PROMPT: &str = "TASK PLAN (RUNTIME)\n\
For every tool-using turn, first call `meta.update_task_plan` with 2-5 concise user-visible steps. Then call the domain tools.\n\
Task labels are visible progress UI. Never include hidden reasoning, chain-of-thought, scratchpad notes, or XML thinking tags.\n\
When a planned step maps to a known tool, include `toolName` so the chat can advance that row from pending to running to done.\n\
Skip `meta.update_task_plan` for questions where no data tool is needed.";

/// The meta tool's input schema.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tasks": {
                "type": "array",
                "maxItems": MAX_TASKS,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "label": {"type": "string"},
                        "detail": {"type": "string"},
                        "toolName": {"type": "string"},
                    },
                    "required": ["label"],
                },
            },
        },
        "required": ["tasks"],
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Pending,
    Running,
    Done,
    Failed,
}

impl State {
    fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
        }
    }

    fn terminal(self) -> bool {
        matches!(self, Self::Done | Self::Failed)
    }
}

#[derive(Clone, Debug)]
struct Task {
    id: String,
    label: String,
    state: State,
    agent: bool,
    detail: Option<String>,
    tool_call_id: Option<String>,
    /// The tool an agent-written step names (dotted).
    tool: Option<String>,
    emitted: bool,
}

impl Task {
    fn frame(&self) -> Value {
        let mut v = json!({
            "id": self.id,
            "label": self.label,
            "state": self.state.as_str(),
            "source": if self.agent { "agent" } else { "runtime" },
        });
        if let Some(map) = v.as_object_mut() {
            if let Some(d) = &self.detail {
                map.insert("detail".into(), json!(d));
            }
            if let Some(c) = &self.tool_call_id {
                map.insert("toolCallId".into(), json!(c));
            }
        }
        v
    }
}

/// One turn's plan.
pub struct TaskPlan {
    plan_id: String,
    tasks: Vec<Task>,
    by_call: HashMap<String, usize>,
    internal_calls: HashSet<String>,
    snapshot_sent: bool,
    agent_authored: bool,
}

impl TaskPlan {
    pub fn new(turn_id: uuid::Uuid) -> Self {
        Self {
            plan_id: format!("turn_{turn_id}"),
            tasks: Vec::new(),
            by_call: HashMap::new(),
            internal_calls: HashSet::new(),
            snapshot_sent: false,
            agent_authored: false,
        }
    }

    fn snapshot(&mut self) -> Vec<Value> {
        if self.tasks.is_empty() {
            return Vec::new();
        }
        self.snapshot_sent = true;
        for t in &mut self.tasks {
            t.emitted = true;
        }
        vec![json!({
            "type": "data-agent-task-plan",
            "planId": self.plan_id,
            "tasks": self.tasks.iter().map(Task::frame).collect::<Vec<_>>(),
        })]
    }

    fn emit(&mut self, index: usize) -> Vec<Value> {
        if !self.snapshot_sent {
            return self.snapshot();
        }
        let Some(task) = self.tasks.get_mut(index) else {
            return Vec::new();
        };
        task.emitted = true;
        vec![json!({
            "type": "data-agent-task-update",
            "planId": self.plan_id,
            "task": task.frame(),
        })]
    }

    /// The agent's own plan from the meta tool's input (cleaned; an input
    /// without a usable task changes nothing).
    fn agent_plan(&mut self, input: &Value) -> Vec<Value> {
        let mut tasks: Vec<Task> = Vec::new();
        for (n, raw) in input["tasks"]
            .as_array()
            .into_iter()
            .flatten()
            .take(MAX_TASKS)
            .enumerate()
        {
            let Some(label) = clean_text(&raw["label"], LABEL_MAX) else {
                continue;
            };
            let base = clean_id(&raw["id"]).unwrap_or_else(|| format!("agent-plan-{}", n + 1));
            let mut id = base.clone();
            let mut suffix = 2;
            while tasks.iter().any(|t| t.id == id) {
                id = format!("{base}-{suffix}");
                suffix += 1;
            }
            tasks.push(Task {
                id,
                label,
                state: State::Pending,
                agent: true,
                detail: clean_text(&raw["detail"], DETAIL_MAX),
                tool_call_id: None,
                tool: raw["toolName"].as_str().and_then(normalize_tool),
                emitted: false,
            });
        }
        if tasks.is_empty() {
            return Vec::new();
        }
        self.tasks = tasks;
        self.by_call.clear();
        self.snapshot_sent = false;
        self.agent_authored = true;
        self.snapshot()
    }

    /// The agent-written step a tool call advances: a pending one naming
    /// the tool, else an unfinished one naming it, else the first pending
    /// (then unfinished) one naming no tool.
    fn planned(&self, tool: &str) -> Option<usize> {
        if !self.agent_authored {
            return None;
        }
        let named = |t: &Task| t.tool.as_deref() == Some(tool);
        let unnamed = |t: &Task| t.tool.is_none();
        self.tasks
            .iter()
            .position(|t| t.state == State::Pending && named(t))
            .or_else(|| {
                self.tasks
                    .iter()
                    .position(|t| !t.state.terminal() && named(t))
            })
            .or_else(|| {
                self.tasks
                    .iter()
                    .position(|t| t.state == State::Pending && unnamed(t))
            })
            .or_else(|| {
                self.tasks
                    .iter()
                    .position(|t| !t.state.terminal() && unnamed(t))
            })
    }

    fn task_for(&mut self, call_id: &str, tool: &str) -> usize {
        if let Some(i) = self.by_call.get(call_id) {
            return *i;
        }
        let index = match self.planned(tool) {
            Some(i) => i,
            None => {
                self.tasks.push(Task {
                    id: call_id.to_string(),
                    label: label(tool),
                    state: State::Running,
                    agent: false,
                    detail: Some(tool.to_string()),
                    tool_call_id: Some(call_id.to_string()),
                    tool: None,
                    emitted: false,
                });
                self.tasks.len() - 1
            }
        };
        self.by_call.insert(call_id.to_string(), index);
        index
    }

    fn set(&mut self, index: usize, state: State, call_id: &str) {
        if let Some(task) = self.tasks.get_mut(index) {
            if !task.state.terminal() {
                task.state = state;
            }
            task.tool_call_id = Some(call_id.to_string());
        }
    }

    /// Frames to send before `tool-input-start` / `tool-input-available`
    /// (`input`: the parsed arguments, known only for the latter).
    pub fn running(&mut self, call_id: &str, tool_name: &str, input: Option<&Value>) -> Vec<Value> {
        let Some(tool) = normalize_tool(tool_name) else {
            return Vec::new();
        };
        if tool == TOOL {
            self.internal_calls.insert(call_id.to_string());
            return match input {
                Some(input) => self.agent_plan(input),
                None => Vec::new(),
            };
        }
        if self.internal_calls.contains(call_id) {
            return Vec::new();
        }
        let index = self.task_for(call_id, &tool);
        self.set(index, State::Running, call_id);
        self.emit(index)
    }

    /// Frames to send after the call's `tool-output-available` (`ok`) or
    /// `tool-output-error`.
    pub fn finished(&mut self, call_id: &str, ok: bool) -> Vec<Value> {
        if self.internal_calls.contains(call_id) {
            return Vec::new();
        }
        let Some(index) = self.by_call.get(call_id).copied() else {
            return Vec::new();
        };
        self.set(index, if ok { State::Done } else { State::Failed }, call_id);
        self.emit(index)
    }
}

#[cfg(test)]
mod tests;
