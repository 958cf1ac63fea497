//! `GET /ai_assistant/tools`, `POST /ai_assistant/tools/execute`.

use actix_web::{HttpResponse, get, post, web};
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Json};

use crate::VIEW;
use crate::actions::{PendingAction, proposal_result};
use crate::dto::{ExecuteTool, ToolInfo, ToolList, ToolResult};
use crate::keys;
use crate::state::AiState;
use crate::tools::{self, Ran};

/// The registered tools the caller holds the features of.
#[utoipa::path(
    tag = "AI Assistant",
    responses(
        (status = 200, body = ToolList),
    )
)]
#[get("/ai_assistant/tools")]
pub async fn list_tools(
    ctx: AuthContext,
    state: web::Data<AiState>,
) -> AppResult<web::Json<ToolList>> {
    ctx.require(VIEW)?;
    let tools = state
        .registry
        .ai_tools()
        .iter()
        .filter(|t| t.features.iter().all(|f| ctx.has(f)))
        .map(|t| ToolInfo {
            name: t.name.into(),
            description: t.description.into(),
            input_schema: (t.input_schema)(),
            module: t.module.into(),
            is_mutation: t.kind == stoa_acl::ToolKind::Mutation,
        })
        .collect();
    Ok(web::Json(ToolList { tools }))
}

fn failure(err: &AppError) -> HttpResponse {
    let mut body = json!({"success": false, "error": err.message()});
    if let (Some(code), Some(map)) = (err.code(), body.as_object_mut()) {
        map.insert("code".into(), Value::String(code.into()));
    }
    HttpResponse::build(err.status()).json(body)
}

/// Runs a tool as the caller: a read tool at once; a mutation tool is
/// proposed as a pending action for a person to confirm, exactly as when a
/// model calls it (`agentId` names the agent whose gate applies).
#[utoipa::path(
    tag = "AI Assistant",
    request_body = ExecuteTool,
    responses(
        (status = 200, body = ToolResult, description = "A read's result, or a mutation's proposal (`result.status: pending-confirmation`, `pendingAction`)"),
        (status = 400, body = ErrorBody, description = "`toolName is required`, `Tool \"<name>\" not found`, invalid input, the tool failed (`{success:false, error}`), `SESSION_EXPIRED`"),
        (status = 403, body = ErrorBody, description = "The tool's features, or no agent may propose it"),
        (status = 404, body = ErrorBody, description = "The record the tool names is not the caller's to see (`{success:false, error}`)"),
        (status = 409, body = ErrorBody, description = "`mutation_blocked_by_policy`: the named agent's policy, or the policy of the record's organization, is read-only"),
    )
)]
#[post("/ai_assistant/tools/execute")]
pub async fn execute_tool(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    body: Json<ExecuteTool>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let body = body.into_inner();
    let Some(name) = body.tool_name.filter(|n| !n.trim().is_empty()) else {
        return Err(AppError::bad_request("toolName is required"));
    };
    let Some(tool) = state.registry.ai_tool(name.trim()) else {
        return Ok(failure(&AppError::bad_request(format!(
            "Tool \"{}\" not found",
            name.trim()
        ))));
    };
    if !tool.features.iter().all(|f| ctx.has(f)) {
        return Err(AppError::forbidden().with_field("requiredFeatures", tool.features));
    }
    let mut input = tools::normalize(body.args.unwrap_or(Value::Null));
    if let Some(token) = input
        .as_object_mut()
        .and_then(|m| m.remove("_sessionToken"))
    {
        let mut conn = db.conn().await?;
        if let Err(err) = keys::check_session_token(&mut conn, &state, &ctx, &token).await {
            return Ok(failure(&err));
        }
    }
    if let Err(err) = tools::check_input(tool, &input) {
        return Ok(failure(&err));
    }
    let agent = match tool.kind {
        stoa_acl::ToolKind::Read => None,
        stoa_acl::ToolKind::Mutation => {
            Some(tools::agent_for_direct(&db, &state, &ctx, tool, body.agent_id.as_deref()).await?)
        }
    };
    let ran = match agent {
        None => tools::run_read(&db, &ctx, tool, input).await.map(Ran::Read),
        Some(agent) => tools::run_for_agent(&db, &state, &ctx, agent, tool, input, None).await,
    };
    match ran {
        Ok(Ran::Read(result)) => Ok(HttpResponse::Ok().json(ToolResult {
            success: true,
            result,
        })),
        Ok(Ran::Proposed(row)) => Ok(HttpResponse::Ok().json(json!({
            "success": true,
            "result": proposal_result(&row),
            "pendingAction": PendingAction::from(*row),
        }))),
        Err(err) if err.status().as_u16() == 403 => Err(err),
        Err(err) if err.status().is_server_error() => Err(err),
        Err(err) => Ok(failure(&err)),
    }
}
