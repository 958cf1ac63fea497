//! `POST /ai_assistant/ai/run-object`: one structured answer from an agent
//! declaring `executionMode: object`. The gate runs first (404/403); no
//! built-in agent is an object agent, so each answers 422, as the reference.

use actix_web::{post, web};
use serde::Deserialize;
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Json};
use utoipa::ToSchema;
use validator::Validate;

use crate::VIEW;
use crate::agents::ExecutionMode;
use crate::error::AiError;
use crate::policy;
use crate::routes::chat::ChatMessage;

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunObject {
    #[validate(length(min = 1, max = 256))]
    pub agent: String,
    #[validate(length(min = 1, max = 100))]
    pub messages: Vec<ChatMessage>,
    #[schema(value_type = Option<Object>)]
    pub page_context: Option<Value>,
}

#[utoipa::path(tag = "AI Assistant", request_body = RunObject, security(("bearerAuth" = []), ("apiKey" = [])),
    responses((status = 200, body = Object, description = "`{object, usage?, finishReason?}`"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "`agent_features_denied`"),
        (status = 404, body = ErrorBody, description = "`agent_unknown`"),
        (status = 422, body = ErrorBody, description = "`execution_mode_not_supported`: not an object agent")))]
#[post("/ai_assistant/ai/run-object")]
pub async fn run_object(ctx: AuthContext, body: Json<RunObject>) -> AppResult<web::Json<Value>> {
    ctx.require(VIEW)?;
    let body = body.into_inner();
    let agent = policy::agent_for(&ctx, &body.agent)?;
    if agent.execution_mode != ExecutionMode::Object {
        return Err(AiError::ExecutionModeNotSupported { object_route: true }.into());
    }
    // No registered agent runs in object mode (the reference's built-ins are
    // all chat agents); an object agent's structured call is not built yet.
    Err(AppError::new(
        actix_web::http::StatusCode::NOT_IMPLEMENTED,
        "Object mode is not available yet",
    ))
}
