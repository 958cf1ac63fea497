//! Request and response types of the assistant's routes.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use validator::Validate;

/// `POST /ai_assistant/ai/actions/{id}/cancel` (optional body; unknown keys refused).
#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelAction {
    #[validate(length(max = 500))]
    pub reason: Option<String>,
}

/// `POST /ai_assistant/tools/execute`.
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteTool {
    /// The dotted tool name.
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub args: Option<Value>,
    /// The agent whose approval gate a mutation goes through (default: the
    /// first agent the caller may use that allows the tool).
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// `{success, result}` of a tool run (a mutation's result is its proposal).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub success: bool,
    #[schema(value_type = Object)]
    pub result: Value,
}

/// One tool of `GET /ai_assistant/tools`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    #[schema(value_type = Object)]
    pub input_schema: Value,
    pub module: String,
    pub is_mutation: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ToolList {
    pub tools: Vec<ToolInfo>,
}

/// A tool as an agent lists it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentTool {
    pub name: String,
    pub display_name: String,
    pub is_mutation: bool,
    pub registered: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TaskPlan {
    pub enabled: bool,
}

/// One agent of `GET /ai_assistant/ai/agents`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentInfo {
    pub id: String,
    pub module_id: String,
    pub label: String,
    pub description: String,
    pub system_prompt: String,
    pub execution_mode: crate::agents::ExecutionMode,
    pub default_provider: Option<String>,
    pub default_model: Option<String>,
    pub default_base_url: Option<String>,
    pub allow_runtime_model_override: bool,
    pub mutation_policy: crate::agents::MutationPolicy,
    pub read_only: bool,
    pub max_steps: Option<u32>,
    pub task_plan: TaskPlan,
    pub allowed_tools: Vec<String>,
    pub tools: Vec<AgentTool>,
    pub required_features: Vec<String>,
    pub accepted_media_types: Vec<String>,
    pub keywords: Vec<String>,
    pub suggestions: Vec<String>,
    pub has_output_schema: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentList {
    pub agents: Vec<AgentInfo>,
    pub total: usize,
    pub ai_configured: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    pub id: String,
    pub name: String,
    pub context_window: Option<u32>,
    pub tags: Vec<String>,
    pub is_default: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderModels {
    pub id: String,
    pub name: String,
    pub is_default: bool,
    pub models: Vec<ModelInfo>,
}

/// `GET /ai_assistant/ai/agents/{agentId}/models`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentModels {
    pub agent_id: String,
    pub allow_runtime_override: bool,
    pub allow_runtime_model_override: bool,
    pub default_provider_id: Option<String>,
    pub default_model_id: Option<String>,
    pub default_provider_name: Option<String>,
    pub default_model_name: Option<String>,
    pub providers: Vec<ProviderModels>,
    pub degraded: bool,
    pub degraded_reason: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SearchHealth {
    pub available: bool,
    pub driver: Option<String>,
    pub url: Option<String>,
}

/// `GET /ai_assistant/health`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `ok` when a provider is configured, else `error`.
    pub status: String,
    pub search: SearchHealth,
    pub url: Option<String>,
    pub mcp_url: Option<String>,
    pub message: Option<String>,
    pub providers: Vec<String>,
}

/// `{ok, pendingAction}` of a cancel.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CancelledAction {
    pub ok: bool,
    pub pending_action: crate::actions::PendingAction,
}
