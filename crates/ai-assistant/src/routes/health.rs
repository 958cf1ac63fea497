//! `GET /ai_assistant/health`.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;

use crate::VIEW;
use crate::dto::{Health, SearchHealth};
use crate::state::AiState;

/// Whether a provider is configured (no OpenCode server or MCP endpoint here).
#[utoipa::path(
    tag = "AI Assistant",
    responses(
        (status = 200, body = Health),
    )
)]
#[get("/ai_assistant/health")]
pub async fn ai_health(
    ctx: AuthContext,
    state: web::Data<AiState>,
) -> AppResult<web::Json<Health>> {
    ctx.require(VIEW)?;
    let providers: Vec<String> = state
        .config
        .providers
        .iter()
        .map(|p| p.def.id.to_string())
        .collect();
    let ok = !providers.is_empty();
    Ok(web::Json(Health {
        status: if ok { "ok" } else { "error" }.into(),
        search: SearchHealth {
            available: false,
            driver: None,
            url: None,
        },
        url: None,
        mcp_url: None,
        message: (!ok).then(|| "No AI provider is configured".to_string()),
        providers,
    }))
}
