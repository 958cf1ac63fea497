//! `POST /ai_assistant/ai/run-object`: one structured answer from an agent
//! declaring `executionMode: object` (an output schema, `generate` mode).
//! The gate runs first (404/403); a chat agent, or an object agent that
//! streams, answers 422 `execution_mode_not_supported`, as the reference
//! (every built-in agent is a chat agent). The provider is resolved like a
//! chat's (`modelOverride` as the chat's `model`), the latest user message
//! goes through input moderation as a chat's, then the provider is asked
//! once for the object, which must match the schema. The call is one step:
//! one usage row and the daily rollup, as a chat step's.

use actix_web::{post, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};
use utoipa::ToSchema;
use uuid::Uuid;
use validator::Validate;

use crate::VIEW;
use crate::agents::{ExecutionMode, OutputMode};
use crate::chat;
use crate::error::AiError;
use crate::extract::Json;
use crate::llm::{self, Message};
use crate::moderation;
use crate::policy;
use crate::providers::{self, Requested};
use crate::routes::chat::ChatMessage;
use crate::state::AiState;
use crate::validate;

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunObject {
    #[validate(length(min = 1, max = 256))]
    pub agent: String,
    #[validate(length(min = 1, max = 100))]
    pub messages: Vec<ChatMessage>,
    #[schema(value_type = Option<Object>)]
    pub page_context: Option<Value>,
    /// `model` or `provider/model` (when the agent allows runtime overrides).
    #[validate(length(min = 1, max = 256))]
    pub model_override: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectResult {
    /// The answer, matching the agent's output schema.
    #[schema(value_type = Object)]
    pub object: Value,
    pub finish_reason: String,
    pub usage: ObjectUsage,
}

#[utoipa::path(tag = "AI Assistant", request_body = RunObject,
    responses((status = 200, body = ObjectResult),
        (status = 400, body = ErrorBody, description = "Validation, `runtime_override_disabled`, `provider_unknown`, `provider_not_configured`, `provider_not_allowlisted`, `model_not_allowlisted`, `organization_not_found`, `moderation_blocked` (input moderation on and the latest user message flagged)"),
        (status = 403, body = ErrorBody, description = "`agent_features_denied`"),
        (status = 404, body = ErrorBody, description = "`agent_unknown`"),
        (status = 422, body = ErrorBody, description = "`execution_mode_not_supported`: not an object agent, or one that streams"),
        (status = 500, body = ErrorBody, description = "`internal_error`: no provider, a failing provider, or no object matching the schema")))]
#[post("/ai_assistant/ai/run-object")]
pub async fn run_object(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    body: Json<RunObject>,
) -> AppResult<web::Json<ObjectResult>> {
    ctx.require(VIEW)?;
    let body = body.into_inner();
    crate::validate::client_roles(body.messages.iter().map(|m| m.role.as_str()))?;
    let agent = policy::agent_for(&state, &ctx, &body.agent)?;
    let output = match agent.output {
        Some(output)
            if agent.execution_mode == ExecutionMode::Object
                && output.mode == OutputMode::Generate =>
        {
            output
        }
        _ => return Err(AiError::ExecutionModeNotSupported { object_route: true }.into()),
    };
    let requested = Requested {
        model: body.model_override.clone(),
        ..Requested::default()
    };
    let mut conn = db.conn().await?;
    let resolved = providers::resolve(&mut conn, &state, &ctx, agent, &requested).await?;
    crate::conversations::require_active_organization(&mut conn, &state, &ctx).await?;
    let prompt = crate::prompt::system_prompt(&mut conn, &ctx, agent).await;
    drop(conn);
    let latest = ChatMessage::latest_user_text(&body.messages);
    moderation::check(&db, &state, &ctx, agent, &resolved, latest).await?;
    let mut messages = vec![Message::System(prompt)];
    messages.extend(body.messages.into_iter().map(ChatMessage::into_message));
    let schema = (output.schema)();
    let answer = llm::object(
        &state.outbound,
        &resolved,
        &messages,
        output.schema_name,
        &schema,
        state.config.provider_timeout,
    )
    .await
    .map_err(|e| {
        AppError::internal(format!("run-object provider call: {e}")).with_code("internal_error")
    })?;
    // One step: its usage row (and the daily rollup), as a chat step's.
    if let Ok(answer) = &answer {
        chat::record_usage(
            &db,
            &ctx,
            agent,
            chat::UsageStep {
                session_id: Uuid::new_v4(),
                turn_id: Uuid::new_v4(),
                step_index: 0,
                provider_id: resolved.provider.id,
                model: &resolved.model,
                input_tokens: answer.input_tokens,
                output_tokens: answer.output_tokens,
                finish_reason: Some(&answer.finish_reason),
                abort: None,
            },
        )
        .await;
    }
    let answer = match answer {
        Ok(answer) if validate::check(&schema, &answer.object).is_empty() => answer,
        Ok(answer) => {
            tracing::warn!(agent.id = agent.id, problems = ?validate::check(&schema, &answer.object), "object does not match the schema");
            return Err(AiError::ObjectInvalid.into());
        }
        Err(_) => return Err(AiError::ObjectInvalid.into()),
    };
    Ok(web::Json(ObjectResult {
        object: answer.object,
        finish_reason: answer.finish_reason,
        usage: ObjectUsage {
            input_tokens: answer.input_tokens,
            output_tokens: answer.output_tokens,
        },
    }))
}
