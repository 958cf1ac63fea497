//! `POST /ai_assistant/ai/chat?agent=`: the turn streamed as server-sent
//! events (AI SDK UI message stream v1). Every check answers JSON before the
//! stream starts; once it has, a failure is an `error` frame.

use std::sync::Arc;

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, Responder, post, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::Sse;
use stoa_core::rate_limit::{Decision, Quota};
use stoa_core::{AppError, AppResult};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use crate::VIEW;
use crate::chat::{self, Keep, Turn};
use crate::error::AiError;
use crate::extract::{Json, Query};
use crate::llm::Message;
use crate::looping::{self, Preset};
use crate::moderation;
use crate::policy;
use crate::providers::{self, Requested};
use crate::state::AiState;
use crate::task_plan;
use crate::transcript::UserMessage;

/// The chat's query.
#[derive(Debug, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ChatQuery {
    /// `<module>.<agent>`.
    pub agent: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// `tight`, `default` or `loose`: a non-default preset replaces the
    /// steps and budgets of the agent's declaration and of the tenant's
    /// stored loop override for this call.
    pub loop_budget: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatMessage {
    #[schema(max_length = 128)]
    pub id: Option<String>,
    /// `user` or `assistant` (anything else is 400).
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    /// The text of the last user message (what moderation reads), or "".
    pub(crate) fn latest_user_text(messages: &[ChatMessage]) -> &str {
        messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.content.as_str())
            .unwrap_or_default()
    }

    /// The provider's message for this one: the client's messages are
    /// the user's or the assistant's, never a system prompt (routes refuse
    /// other roles first: [`crate::validate::client_roles`]).
    pub(crate) fn into_message(self) -> Message {
        match self.role.as_str() {
            "assistant" => Message::Assistant {
                text: self.content,
                tool_calls: Vec::new(),
            },
            _ => Message::User(self.content),
        }
    }
}

/// The chat's body (other keys are kept and ignored).
#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatBody {
    #[validate(length(min = 1, max = 100))]
    pub messages: Vec<ChatMessage>,
    /// The conversation (and usage session) of the turn; its messages are
    /// kept there.
    pub session_id: Option<Uuid>,
    /// Deprecated name of the conversation, when there is no `sessionId`.
    #[validate(length(min = 1, max = 128))]
    pub conversation_id: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub page_context: Option<Value>,
}

/// Streams the agent's turn. Tools the agent may use for the caller are
/// offered; reads run, mutations become pending actions for a person to
/// confirm (a `pending-confirmation` tool output).
#[utoipa::path(
    tag = "AI Assistant",
    params(ChatQuery),
    request_body = ChatBody,
    responses(
        (status = 200, content_type = "text/event-stream", body = String, description = "UI message stream v1 frames, `[DONE]`, then `loop-finish`"),
        (status = 400, body = ErrorBody, description = "Validation, `moderation_blocked`, `runtime_override_disabled`, `provider_unknown`, `provider_not_configured`, `provider_not_allowlisted`, `model_not_allowlisted`, `baseurl_not_allowlisted`, `organization_not_found` (the selected organization is deleted or inactive)"),
        (status = 403, body = ErrorBody, description = "`agent_features_denied`"),
        (status = 404, body = ErrorBody, description = "`agent_unknown`"),
        (status = 409, body = ErrorBody, description = "`loop_runtime_override_disabled`, `execution_mode_not_supported` (an object agent)"),
        (status = 429, body = ErrorBody, description = "The caller's chat limit is used up (`RATE_LIMIT_AI_CHAT_POINTS` per `RATE_LIMIT_AI_CHAT_DURATION` seconds; `Retry-After`, `X-RateLimit-*`)"),
        (status = 500, body = ErrorBody, description = "`internal_error`: no provider configured"),
    )
)]
#[post("/ai_assistant/ai/chat")]
pub async fn post_chat(
    req: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    query: Query<ChatQuery>,
    body: Json<ChatBody>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let query = query.into_inner();
    let body = body.into_inner();
    let agent_id = query
        .agent
        .as_deref()
        .filter(|a| !a.trim().is_empty())
        .map(str::to_string)
        .ok_or_else(|| AiError::Validation("agent is required".into()))?;
    crate::validate::client_roles(body.messages.iter().map(|m| m.role.as_str()))?;
    let quota = chat_quota(&state, &ctx)?;
    let result = turn(req, ctx, db, state, query, body, agent_id).await;
    Quota::attach(quota, result)
}

/// Counts the turn against the caller's chat limit (per user and tenant):
/// 429 with `Retry-After` and `X-RateLimit-*` once it is used up.
fn chat_quota(state: &AiState, ctx: &AuthContext) -> AppResult<Option<Quota>> {
    let Some(rule) = state.config.chat_rate_limit else {
        return Ok(None);
    };
    let who = ctx
        .user_id
        .or(ctx.api_key_id)
        .map(|id| id.to_string())
        .unwrap_or_default();
    let tenant = ctx.tenant_id.map(|id| id.to_string()).unwrap_or_default();
    let key = format!("ai_chat:{tenant}:{who}");
    match state.limiter.record(&key, &rule) {
        decision @ Decision::Allowed { .. } => Ok(Some(Quota::of(decision, &rule))),
        decision @ Decision::Limited { retry_after } => {
            let quota = Quota::of(decision, &rule);
            Err(quota.apply_to_error(AppError::too_many_requests(retry_after.as_secs())))
        }
    }
}

/// The turn after the limit: every check answers JSON, then the stream.
async fn turn(
    req: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    query: ChatQuery,
    body: ChatBody,
    agent_id: String,
) -> AppResult<HttpResponse> {
    let agent = policy::agent_for(&state, &ctx, &agent_id)?;
    if agent.execution_mode != crate::agents::ExecutionMode::Chat {
        return Err(AiError::ExecutionModeNotSupported {
            object_route: false,
        }
        .into());
    }
    let budget_name = query
        .loop_budget
        .as_deref()
        .filter(|b| !b.trim().is_empty());
    let preset = Preset::parse(budget_name)
        .ok_or_else(|| AiError::Validation("loopBudget must be tight, default or loose".into()))?;
    let budget_override = preset != Preset::Default;
    if budget_override && !agent.allow_runtime_override {
        return Err(AiError::RuntimeOverrideDisabled.into());
    }
    let requested = Requested {
        provider: query.provider,
        model: query.model,
        base_url: query.base_url,
    };
    let mut conn = db.conn().await?;
    let resolved = providers::resolve(&mut conn, &state, &ctx, agent, &requested).await?;
    crate::conversations::require_active_organization(&mut conn, &state, &ctx).await?;
    if budget_override && !agent.loop_override_allowed {
        return Err(AiError::LoopRuntimeOverrideDisabled.into());
    }
    let effective = policy::effective_policy(&mut conn, &ctx, agent).await?;
    let stored = looping::stored(&mut conn, &ctx, agent).await;
    let mut prompt = crate::prompt::system_prompt(&mut conn, &ctx, agent).await;
    drop(conn);
    let looping = looping::effective(agent, stored.as_ref(), preset);
    let latest = ChatMessage::latest_user_text(&body.messages);
    moderation::check(&db, &state, &ctx, agent, &resolved, latest).await?;
    let tools = policy::offered(&state.registry, &ctx, agent, effective)
        .into_iter()
        .filter(|t| {
            looping
                .active_tools
                .as_ref()
                .is_none_or(|active| active.iter().any(|a| a == t.name))
        })
        .cloned()
        .collect();
    // The conversation is the session's (else the named one); a turn that
    // names neither keeps no transcript.
    let conversation_key = body
        .session_id
        .map(|s| s.to_string())
        .or(body.conversation_id.clone());
    let session_id = body
        .session_id
        .or_else(|| body.conversation_id.as_deref().and_then(|c| c.parse().ok()))
        .unwrap_or_else(Uuid::new_v4);
    let conversation = conversation_key.map(|key| Keep {
        key,
        page_context: body.page_context.clone(),
        user_message: body
            .messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| UserMessage {
                id: m.id.clone(),
                content: m.content.clone(),
            }),
    });
    if agent.task_plan {
        prompt.push_str("\n\n");
        prompt.push_str(task_plan::PROMPT);
    }
    let mut messages = vec![Message::System(prompt)];
    messages.extend(body.messages.into_iter().map(ChatMessage::into_message));
    let turn = Turn {
        db: db.get_ref().clone(),
        state: Arc::clone(&state.into_inner()),
        ctx,
        agent,
        resolved,
        tools,
        messages,
        looping,
        session_id,
        conversation,
    };
    let sse = Sse::spawn(move |tx| chat::run(turn, tx));
    let mut response = sse.respond_to(&req).map_into_boxed_body();
    let headers = response.headers_mut();
    headers.insert(
        HeaderName::from_static(stoa_core::http::headers::AI_UI_MESSAGE_STREAM),
        HeaderValue::from_static("v1"),
    );
    headers.insert(
        actix_web::http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-transform"),
    );
    Ok(response)
}
