//! The legacy `POST /ai_assistant/chat` and `POST /ai_assistant/route`.
//!
//! The reference's legacy chat proxies an external OpenCode agent server,
//! which stoa does not run (the reference notes' port advice): after the
//! reference's input checks it streams one `error` frame pointing at
//! `/ai/chat`. The intent router asks the configured provider to choose one
//! of the offered tools or general chat.

use actix_web::{HttpRequest, HttpResponse, Responder, post, web};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::{Sse, SseEvent};
use stoa_core::{AppError, AppResult, Json};
use utoipa::ToSchema;
use validator::Validate;

use crate::VIEW;
use crate::error::AiError;
use crate::llm::{self, Message};
use crate::providers::{self, Requested};
use crate::state::AiState;

/// What the legacy chat answers instead of an OpenCode session.
pub const NO_OPENCODE: &str =
    "The OpenCode agent server is not available; use POST /api/ai_assistant/ai/chat";

#[derive(Debug, Deserialize, ToSchema)]
pub struct LegacyMessage {
    /// `user` or `assistant` (anything else is 400).
    pub role: String,
    pub content: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnswerQuestion {
    pub question_id: String,
    pub answer: f64,
    pub session_id: String,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LegacyChat {
    pub messages: Option<Vec<LegacyMessage>>,
    pub session_id: Option<String>,
    /// An answer to an OpenCode question (there are none here: 404).
    pub answer_question: Option<AnswerQuestion>,
}

/// Legacy streamed chat (OpenCode). Checks the messages, then streams one
/// `{type:"error", error}` frame: stoa runs no OpenCode server.
#[utoipa::path(tag = "AI Assistant", request_body = LegacyChat,
    responses(
        (status = 200, content_type = "text/event-stream", body = String, description = "`data: {\"type\":\"error\",\"error\":…}` frames, no `[DONE]`"),
        (status = 400, body = ErrorBody, description = "`messages array is required`, a role other than `user` or `assistant`, no user message"),
        (status = 404, body = ErrorBody, description = "`question_not_found`: no OpenCode question to answer")))]
#[post("/ai_assistant/chat")]
pub async fn legacy_chat(
    req: HttpRequest,
    ctx: AuthContext,
    body: Json<LegacyChat>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let body = body.into_inner();
    if body.answer_question.is_some() {
        return Err(AiError::QuestionNotFound.into());
    }
    let messages = body
        .messages
        .filter(|m| !m.is_empty())
        .ok_or_else(|| AppError::bad_request("messages array is required"))?;
    crate::validate::client_roles(messages.iter().map(|m| m.role.as_str()))?;
    if !messages.iter().any(|m| m.role == "user") {
        return Err(AppError::bad_request("A user message is required"));
    }
    let frame = SseEvent::json(&json!({"type": "error", "error": NO_OPENCODE}))?;
    let sse = Sse::spawn(move |tx| async move {
        let _ = tx.send(frame).await;
    });
    Ok(sse.respond_to(&req).map_into_boxed_body())
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct OfferedTool {
    pub name: String,
    pub description: Option<String>,
}

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteQuery {
    pub query: Option<String>,
    pub available_tools: Option<Vec<OfferedTool>>,
}

/// The router's decision.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Route {
    /// `tool` or `general_chat`.
    pub intent: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// 0 to 1.
    pub confidence: f64,
    pub reasoning: String,
}

fn prompt(tools: &[OfferedTool]) -> String {
    let list: Vec<String> = tools
        .iter()
        .map(|t| format!("- {}: {}", t.name, t.description.as_deref().unwrap_or("")))
        .collect();
    format!(
        "Decide whether the user's request should be handled by one of these tools or by general chat.\n\
         Tools:\n{}\n\
         Answer with only a JSON object: {{\"intent\": \"tool\" or \"general_chat\", \
         \"toolName\": the tool's exact name when intent is tool, \
         \"confidence\": a number from 0 to 1, \"reasoning\": one short sentence}}.",
        list.join("\n")
    )
}

/// Reads the model's answer; a tool it names must be one offered, and an
/// answer that is no decision is general chat with no confidence.
pub fn decision(text: &str, tools: &[OfferedTool]) -> Route {
    let parsed: Option<Value> = text
        .find('{')
        .zip(text.rfind('}'))
        .filter(|(a, b)| a < b)
        .and_then(|(a, b)| serde_json::from_str(&text[a..=b]).ok());
    let Some(v) = parsed else {
        return Route {
            intent: "general_chat".into(),
            tool_name: None,
            confidence: 0.0,
            reasoning: "The model's answer was not a routing decision".into(),
        };
    };
    let reasoning = v["reasoning"].as_str().unwrap_or_default().to_string();
    let confidence = v["confidence"].as_f64().unwrap_or(0.0).clamp(0.0, 1.0);
    let tool = v["toolName"]
        .as_str()
        .filter(|n| v["intent"] == "tool" && tools.iter().any(|t| t.name == *n));
    match tool {
        Some(name) => Route {
            intent: "tool".into(),
            tool_name: Some(name.to_string()),
            confidence,
            reasoning,
        },
        None => Route {
            intent: "general_chat".into(),
            tool_name: None,
            confidence: if v["intent"] == "general_chat" {
                confidence
            } else {
                0.0
            },
            reasoning,
        },
    }
}

/// Routes a query to one of the offered tools or to general chat, asking
/// the tenant's default provider.
#[utoipa::path(tag = "AI Assistant", request_body = RouteQuery,
    responses((status = 200, body = Route), (status = 400, body = ErrorBody, description = "`query is required`, `availableTools array is required`"),
        (status = 500, body = ErrorBody, description = "The provider failed"),
        (status = 503, body = ErrorBody, description = "`no_provider`: no AI provider is configured")))]
#[post("/ai_assistant/route")]
pub async fn route_intent(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    body: Json<RouteQuery>,
) -> AppResult<web::Json<Route>> {
    ctx.require(VIEW)?;
    let body = body.into_inner();
    let query = body
        .query
        .filter(|q| !q.trim().is_empty())
        .ok_or_else(|| AppError::bad_request("query is required"))?;
    let tools = body
        .available_tools
        .ok_or_else(|| AppError::bad_request("availableTools array is required"))?;
    let mut conn = db.conn().await?;
    let resolved =
        match providers::resolve_scoped(&mut conn, &state, &ctx, None, true, &Requested::default())
            .await
        {
            Err(AiError::NoProvider | AiError::ProviderNotConfigured) => {
                return Err(AiError::RouterUnavailable.into());
            }
            other => other?,
        };
    drop(conn);
    let messages = [Message::System(prompt(&tools)), Message::User(query)];
    let text = llm::complete(
        &state.outbound,
        &resolved,
        &messages,
        state.config.provider_timeout,
    )
    .await
    .map_err(|err| {
        tracing::warn!(error = %err, "ai intent routing failed");
        AiError::RouterFailed
    })?;
    Ok(web::Json(decision(&text, &tools)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_offered_tool_is_a_tool_decision() {
        let tools = [OfferedTool {
            name: "customers.get_deal".into(),
            description: None,
        }];
        let r = decision(
            "Sure: {\"intent\":\"tool\",\"toolName\":\"customers.get_deal\",\"confidence\":1.5,\"reasoning\":\"deal\"}",
            &tools,
        );
        assert_eq!(
            (r.intent.as_str(), r.tool_name.as_deref(), r.confidence),
            ("tool", Some("customers.get_deal"), 1.0)
        );
        let r = decision(
            "{\"intent\":\"tool\",\"toolName\":\"x.y\",\"confidence\":0.9}",
            &tools,
        );
        assert_eq!((r.intent.as_str(), r.confidence), ("general_chat", 0.0));
        let r = decision("no idea", &tools);
        assert_eq!(r.intent, "general_chat");
    }
}
