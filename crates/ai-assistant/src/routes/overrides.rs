//! `/ai_assistant/ai/agents/{agentId}/{loop-override,mutation-policy,prompt-override}`.

use actix_web::{delete, get, post, put, web};
use serde::Serialize;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use utoipa::ToSchema;

use crate::error::AiError;
use crate::extract::{Json, Path};
use crate::overrides::{
    self, LoopOverride, LoopOverrideInput, MutationPolicyInput, PolicyOverride,
    PromptOverrideInput, PromptVersion,
};
use crate::policy;
use crate::state::AiState;
use crate::{SETTINGS_MANAGE, VIEW};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoopOverrideAnswer {
    pub agent_id: String,
    pub r#override: Option<LoopOverride>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyAnswer {
    pub agent_id: String,
    pub code_declared: String,
    pub r#override: Option<PolicyOverride>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptAnswer {
    pub agent_id: String,
    pub r#override: Option<PromptVersion>,
    pub versions: Vec<PromptVersion>,
}

#[utoipa::path(tag = "AI Assistant", params(("agentId" = String, Path)),
    responses((status = 200, body = LoopOverrideAnswer),
        (status = 404, body = ErrorBody)))]
#[get("/ai_assistant/ai/agents/{agentId}/loop-override")]
pub async fn get_loop_override(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    agent_id: Path<String>,
) -> AppResult<web::Json<LoopOverrideAnswer>> {
    ctx.require(VIEW)?;
    let agent = policy::known_agent(&state, &agent_id.into_inner())?;
    let mut conn = db.conn().await?;
    Ok(web::Json(LoopOverrideAnswer {
        agent_id: agent.id.into(),
        r#override: overrides::get_loop(&mut conn, &ctx, agent).await?,
    }))
}

/// Sets the seven loop columns (omitted or `null` clears that axis).
#[utoipa::path(tag = "AI Assistant", params(("agentId" = String, Path)), request_body = LoopOverrideInput,
    responses((status = 200, body = Object, description = "`{ok, agentId, override}`"), (status = 400, body = ErrorBody, description = "Validation, `invalid_loop_override`"),
        (status = 404, body = ErrorBody)))]
#[put("/ai_assistant/ai/agents/{agentId}/loop-override")]
pub async fn put_loop_override(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    agent_id: Path<String>,
    body: Json<LoopOverrideInput>,
) -> AppResult<web::Json<Value>> {
    ctx.require(SETTINGS_MANAGE)?;
    let agent = policy::known_agent(&state, &agent_id.into_inner())?;
    let saved = overrides::put_loop(&db, &ctx, agent, body.into_inner()).await?;
    Ok(web::Json(
        json!({"ok": true, "agentId": agent.id, "override": saved}),
    ))
}

#[utoipa::path(tag = "AI Assistant", params(("agentId" = String, Path)),
    responses((status = 200, body = Object, description = "`{ok, agentId, cleared}`"),
        (status = 404, body = ErrorBody)))]
#[delete("/ai_assistant/ai/agents/{agentId}/loop-override")]
pub async fn delete_loop_override(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    agent_id: Path<String>,
) -> AppResult<web::Json<Value>> {
    ctx.require(SETTINGS_MANAGE)?;
    let agent = policy::known_agent(&state, &agent_id.into_inner())?;
    let cleared = overrides::clear_loop(&db, &ctx, agent).await?;
    Ok(web::Json(
        json!({"ok": true, "agentId": agent.id, "cleared": cleared}),
    ))
}

#[utoipa::path(tag = "AI Assistant", params(("agentId" = String, Path)),
    responses((status = 200, body = PolicyAnswer),
        (status = 404, body = ErrorBody)))]
#[get("/ai_assistant/ai/agents/{agentId}/mutation-policy")]
pub async fn get_mutation_policy(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    agent_id: Path<String>,
) -> AppResult<web::Json<PolicyAnswer>> {
    ctx.require(VIEW)?;
    let agent = policy::known_agent(&state, &agent_id.into_inner())?;
    let mut conn = db.conn().await?;
    Ok(web::Json(PolicyAnswer {
        agent_id: agent.id.into(),
        code_declared: overrides::declared(agent).as_str().into(),
        r#override: overrides::get_policy(&mut conn, &ctx, agent).await?,
    }))
}

/// Sets the override; it may only be as or more restrictive than the code's.
#[utoipa::path(tag = "AI Assistant", params(("agentId" = String, Path)), request_body = MutationPolicyInput,
    responses((status = 200, body = Object, description = "`{ok, agentId, codeDeclared, override}`"), (status = 400, body = ErrorBody, description = "`escalation_not_allowed`"),
        (status = 404, body = ErrorBody)))]
#[post("/ai_assistant/ai/agents/{agentId}/mutation-policy")]
pub async fn set_mutation_policy(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    agent_id: Path<String>,
    body: Json<MutationPolicyInput>,
) -> AppResult<web::Json<Value>> {
    ctx.require(SETTINGS_MANAGE)?;
    let agent = policy::known_agent(&state, &agent_id.into_inner())?;
    let saved = overrides::set_policy(&db, &ctx, agent, body.into_inner()).await?;
    Ok(web::Json(json!({
        "ok": true,
        "agentId": agent.id,
        "codeDeclared": overrides::declared(agent).as_str(),
        "override": saved,
    })))
}

#[utoipa::path(tag = "AI Assistant", params(("agentId" = String, Path)),
    responses((status = 200, body = Object, description = "`{ok, agentId, codeDeclared, override:null, cleared}`"),
        (status = 404, body = ErrorBody)))]
#[delete("/ai_assistant/ai/agents/{agentId}/mutation-policy")]
pub async fn delete_mutation_policy(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    agent_id: Path<String>,
) -> AppResult<web::Json<Value>> {
    ctx.require(SETTINGS_MANAGE)?;
    let agent = policy::known_agent(&state, &agent_id.into_inner())?;
    let cleared = overrides::clear_policy(&db, &ctx, agent).await?;
    Ok(web::Json(json!({
        "ok": true,
        "agentId": agent.id,
        "codeDeclared": overrides::declared(agent).as_str(),
        "override": null,
        "cleared": cleared,
    })))
}

#[utoipa::path(tag = "AI Assistant", params(("agentId" = String, Path)),
    responses((status = 200, body = PromptAnswer, description = "The latest override and up to 10 versions, newest first"),
        (status = 404, body = ErrorBody)))]
#[get("/ai_assistant/ai/agents/{agentId}/prompt-override")]
pub async fn get_prompt_override(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    agent_id: Path<String>,
) -> AppResult<web::Json<PromptAnswer>> {
    ctx.require(SETTINGS_MANAGE)?;
    let agent = policy::known_agent(&state, &agent_id.into_inner())?;
    let mut conn = db.conn().await?;
    let versions = overrides::prompt_versions(&mut conn, &ctx, agent).await?;
    // The newest version is the override in force.
    let latest = versions.first().cloned();
    Ok(web::Json(PromptAnswer {
        agent_id: agent.id.into(),
        r#override: latest,
        versions,
    }))
}

/// Appends a prompt-override version (reserved keys: 400 `reserved_key`).
#[utoipa::path(tag = "AI Assistant", params(("agentId" = String, Path)), request_body = PromptOverrideInput,
    responses((status = 200, body = Object, description = "`{ok, version, updatedAt}`"), (status = 400, body = ErrorBody, description = "`reserved_key`, validation"),
        (status = 404, body = ErrorBody)))]
#[post("/ai_assistant/ai/agents/{agentId}/prompt-override")]
pub async fn add_prompt_override(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    agent_id: Path<String>,
    body: Json<PromptOverrideInput>,
) -> AppResult<web::Json<Value>> {
    ctx.require(SETTINGS_MANAGE)?;
    let body = body.into_inner();
    let Some(sections) = body.sections.or(body.overrides) else {
        return Err(AiError::Validation("sections is required".into()).into());
    };
    overrides::check_reserved(sections.keys())?;
    let agent = policy::known_agent(&state, &agent_id.into_inner())?;
    let row = overrides::add_prompt(&db, &ctx, agent, sections, body.notes).await?;
    Ok(web::Json(json!({
        "ok": true,
        "agentId": agent.id,
        "version": row.version,
        "updatedAt": stoa_core::serde_util::timestamp::format(row.updated_at),
    })))
}
