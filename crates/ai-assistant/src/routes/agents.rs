//! `GET /ai_assistant/ai/agents`, `GET /ai_assistant/ai/agents/{agentId}/models`.

use actix_web::{get, web};
use stoa_acl::{AuthContext, ToolKind};
use stoa_core::AppResult;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;

use crate::VIEW;
use crate::agents::{AgentDef, MutationPolicy};
use crate::config;
use crate::dto::{
    AgentInfo, AgentList, AgentModels, AgentTool, ModelInfo, ProviderModels, TaskPlan,
};
use crate::extract::Path;
use crate::policy;
use crate::providers::{self, Allowlist, Requested};
use crate::state::AiState;

fn info(state: &AiState, agent: &AgentDef) -> AgentInfo {
    let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    AgentInfo {
        id: agent.id.into(),
        module_id: agent.module_id.into(),
        label: agent.label.into(),
        description: agent.description.into(),
        system_prompt: agent.system_prompt.into(),
        execution_mode: agent.execution_mode,
        default_provider: None,
        default_model: None,
        default_base_url: None,
        allow_runtime_model_override: agent.allow_runtime_override,
        mutation_policy: if agent.read_only {
            MutationPolicy::ReadOnly
        } else {
            agent.mutation_policy
        },
        read_only: agent.read_only,
        max_steps: Some(agent.budget.max_steps),
        task_plan: TaskPlan {
            enabled: agent.task_plan,
        },
        allowed_tools: strings(agent.allowed_tools),
        tools: agent
            .allowed_tools
            .iter()
            .map(|name| {
                let tool = state.registry.ai_tool(name);
                AgentTool {
                    name: name.to_string(),
                    display_name: tool.map_or_else(|| name.to_string(), |t| t.display_name.into()),
                    is_mutation: tool.is_some_and(|t| t.kind == ToolKind::Mutation),
                    registered: tool.is_some(),
                }
            })
            .collect(),
        required_features: strings(agent.required_features),
        accepted_media_types: strings(agent.accepted_media_types),
        keywords: strings(agent.keywords),
        suggestions: strings(agent.suggestions),
        has_output_schema: agent.output.is_some(),
    }
}

/// The agents whose required features the caller holds.
#[utoipa::path(
    tag = "AI Assistant",
    responses(
        (status = 200, body = AgentList),
        (status = 500, body = ErrorBody),
    )
)]
#[get("/ai_assistant/ai/agents")]
pub async fn list_agents(
    ctx: AuthContext,
    state: web::Data<AiState>,
) -> AppResult<web::Json<AgentList>> {
    ctx.require(VIEW)?;
    let agents: Vec<AgentInfo> = state
        .agents
        .iter()
        .copied()
        .filter(|a| a.required_features.iter().all(|f| ctx.has(f)))
        .map(|a| info(&state, a))
        .collect();
    Ok(web::Json(AgentList {
        total: agents.len(),
        agents,
        ai_configured: !state.config.providers.is_empty(),
    }))
}

/// The providers (with a configured key) and models the agent may run on.
#[utoipa::path(
    tag = "AI Assistant",
    params(("agentId" = String, Path, description = "`<module>.<agent>`")),
    responses(
        (status = 200, body = AgentModels),
        (status = 400, body = ErrorBody, description = "Malformed agent id"),
        (status = 403, body = ErrorBody, description = "`agent_features_denied`"),
        (status = 404, body = ErrorBody, description = "`agent_unknown`"),
    )
)]
#[get("/ai_assistant/ai/agents/{agentId}/models")]
pub async fn agent_models(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    agent_id: Path<String>,
) -> AppResult<web::Json<AgentModels>> {
    ctx.require(VIEW)?;
    let agent = policy::agent_for(&state, &ctx, &agent_id.into_inner())?;
    let mut conn = db.conn().await?;
    let default = providers::resolve(&mut conn, &state, &ctx, agent, &Requested::default())
        .await
        .ok();
    let (allowlist, degraded) = match ctx.tenant_id {
        Some(tenant) => {
            match providers::allowlist_row(&mut conn, tenant, ctx.organization_id()).await {
                Ok(row) => (Allowlist { tenant: row }, false),
                Err(_) => (Allowlist::default(), true),
            }
        }
        None => (Allowlist::default(), false),
    };
    let cfg = &state.config;
    let providers = if agent.allow_runtime_override {
        cfg.providers
            .iter()
            .filter(|p| allowlist.allows_provider(cfg, p.def.id))
            .filter(|p| p.def.kind != config::ProviderKind::Unsupported)
            .map(|p| {
                let is_default = default.as_ref().is_some_and(|d| d.provider.id == p.def.id);
                ProviderModels {
                    id: p.def.id.into(),
                    name: p.def.name.into(),
                    is_default,
                    models: p
                        .def
                        .models
                        .iter()
                        .filter(|m| allowlist.allows_model(cfg, p.def.id, m))
                        .map(|m| ModelInfo {
                            id: m.to_string(),
                            name: m.to_string(),
                            context_window: None,
                            tags: Vec::new(),
                            is_default: is_default
                                && default.as_ref().is_some_and(|d| d.model == *m),
                        })
                        .collect(),
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(web::Json(AgentModels {
        agent_id: agent.id.into(),
        allow_runtime_override: agent.allow_runtime_override,
        allow_runtime_model_override: agent.allow_runtime_override,
        default_provider_id: default.as_ref().map(|d| d.provider.id.to_string()),
        default_model_id: default.as_ref().map(|d| d.model.clone()),
        default_provider_name: default.as_ref().map(|d| d.provider.name.to_string()),
        default_model_name: default.as_ref().map(|d| d.model.clone()),
        providers,
        degraded,
        degraded_reason: degraded.then(|| "tenant_allowlist_unavailable".to_string()),
    }))
}
