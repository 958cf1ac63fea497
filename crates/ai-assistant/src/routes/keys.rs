//! `POST /ai_assistant/mcp-key`, `POST /ai_assistant/session-key`.

use actix_web::{post, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::extract::parse_json;
use utoipa::ToSchema;
use validator::Validate;

use crate::keys;
use crate::state::AiState;

/// `POST /ai_assistant/mcp-key` (optional fields).
#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpKeyRequest {
    #[validate(length(max = 120))]
    pub name: Option<String>,
    #[validate(length(max = 1000))]
    pub description: Option<String>,
}

/// `{id, name, keyPrefix, secret, tenantId, organizationId, roles}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpKey {
    pub id: uuid::Uuid,
    pub name: String,
    pub key_prefix: String,
    pub secret: String,
    pub tenant_id: uuid::Uuid,
    pub organization_id: Option<uuid::Uuid>,
    /// The ids of the key's roles (the caller's roles).
    pub roles: Vec<String>,
}

/// Creates a persistent API key with the caller's roles, tenant and
/// organization. Needs `api_keys.create`; through the API-keys service the
/// caller must hold everything those roles grant (403 `grant_not_allowed`
/// otherwise), and the key's grants stay bounded by its creator's current
/// ones on every request.
#[utoipa::path(
    tag = "AI Assistant",
    request_body(content = Option<McpKeyRequest>),
    responses(
        (status = 200, body = McpKey),
        (status = 403, body = ErrorBody, description = "Without `api_keys.create`, or roles granting more than the caller holds (`grant_not_allowed`), or an organization out of scope"),
    )
)]
#[post("/ai_assistant/mcp-key")]
pub async fn create_mcp_key(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    body: web::Bytes,
) -> AppResult<web::Json<Value>> {
    ctx.require(crate::operations::MCP_KEY_CREATE)?;
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        McpKeyRequest::default()
    } else {
        parse_json::<McpKeyRequest>(&body)?
    };
    Ok(web::Json(
        keys::create_mcp_key(&db, &state, &ctx, body.name, body.description).await?,
    ))
}

/// `{sessionToken, expiresAt}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionKey {
    pub session_token: String,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: time::OffsetDateTime,
}

/// A `_sessionToken` for tool calls (valid 120 minutes, for this user only;
/// needs `ai_assistant.view`).
#[utoipa::path(
    tag = "AI Assistant",
    responses(
        (status = 200, body = SessionKey),
        (status = 403, body = ErrorBody, description = "Without `ai_assistant.view`, or an API key without a user"),
    )
)]
#[post("/ai_assistant/session-key")]
pub async fn create_session_key(
    ctx: AuthContext,
    db: web::Data<Db>,
) -> AppResult<web::Json<SessionKey>> {
    ctx.require(crate::VIEW)?;
    let (session_token, expires_at) = keys::issue_session_token(&db, &ctx).await?;
    Ok(web::Json(SessionKey {
        session_token,
        expires_at,
    }))
}
