//! `GET|PUT|DELETE /ai_assistant/settings`, `PUT|DELETE /ai_assistant/settings/allowlist`.

use actix_web::{HttpRequest, delete, get, put, web};
use serde::Deserialize;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use utoipa::ToSchema;
use validator::Validate;

use crate::error::AiError;
use crate::extract::{Json, parse_json};
use crate::settings::{self, AllowlistInput, SavedAllowlist, SavedSettings, SettingsInput};
use crate::state::AiState;
use crate::{SETTINGS_MANAGE, VIEW};

/// Providers, allowlists (the environment's, the tenant's and the
/// `effectiveAllowlist` of both), the tenant's override, the tenant-wide
/// `resolvedDefault` and each agent's resolved provider (stored keys are
/// reported as configured, never shown).
#[utoipa::path(tag = "AI Assistant",
    responses((status = 200, body = Object), (status = 403, body = ErrorBody)))]
#[get("/ai_assistant/settings")]
pub async fn get_settings(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
) -> AppResult<web::Json<Value>> {
    ctx.require(VIEW)?;
    Ok(web::Json(settings::read(&db, &state, &ctx).await?))
}

/// Upserts the runtime override (agent-specific when `agentId` is set).
#[utoipa::path(tag = "AI Assistant", request_body = SettingsInput,
    responses((status = 200, body = SavedSettings),
        (status = 400, body = ErrorBody, description = "`baseurl_not_allowlisted`, `provider_not_allowlisted`, `model_not_allowlisted`, `agent_required`, `provider_unknown`, validation"),
        (status = 403, body = ErrorBody)))]
#[put("/ai_assistant/settings")]
pub async fn put_settings(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    body: Json<SettingsInput>,
) -> AppResult<web::Json<SavedSettings>> {
    ctx.require(SETTINGS_MANAGE)?;
    Ok(web::Json(
        settings::put(&db, &state, &ctx, body.into_inner()).await?,
    ))
}

/// `DELETE /ai_assistant/settings` body (optional).
#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClearSettings {
    #[validate(length(max = 128))]
    pub agent_id: Option<String>,
}

/// Clears the runtime override of `agentId` (or the tenant-wide one).
#[utoipa::path(tag = "AI Assistant", request_body(content = Option<ClearSettings>),
    responses((status = 200, body = Object, description = "`{cleared}`"), (status = 403, body = ErrorBody)))]
#[delete("/ai_assistant/settings")]
pub async fn delete_settings(
    _req: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    body: web::Bytes,
) -> AppResult<web::Json<Value>> {
    ctx.require(SETTINGS_MANAGE)?;
    let input = if body.iter().all(u8::is_ascii_whitespace) {
        ClearSettings::default()
    } else if serde_json::from_slice::<Value>(&body).is_err() {
        return Err(AiError::Validation("Request body must be valid JSON.".into()).into());
    } else {
        parse_json::<ClearSettings>(&body)?
    };
    let cleared = settings::clear(&db, &ctx, input.agent_id).await?;
    Ok(web::Json(json!({"cleared": cleared})))
}

/// Replaces the tenant's provider and model allowlist (within the environment's).
#[utoipa::path(tag = "AI Assistant", request_body = AllowlistInput,
    responses((status = 200, body = SavedAllowlist),
        (status = 400, body = ErrorBody, description = "`provider_not_in_env_allowlist`, `model_not_in_env_allowlist`, `provider_unknown`"),
        (status = 403, body = ErrorBody)))]
#[put("/ai_assistant/settings/allowlist")]
pub async fn put_allowlist(
    ctx: AuthContext,
    db: web::Data<Db>,
    state: web::Data<AiState>,
    body: Json<AllowlistInput>,
) -> AppResult<web::Json<SavedAllowlist>> {
    ctx.require(SETTINGS_MANAGE)?;
    Ok(web::Json(
        settings::put_allowlist(&db, &state, &ctx, body.into_inner()).await?,
    ))
}

#[utoipa::path(tag = "AI Assistant",
    responses((status = 200, body = Object, description = "`{cleared}`"), (status = 403, body = ErrorBody)))]
#[delete("/ai_assistant/settings/allowlist")]
pub async fn delete_allowlist(ctx: AuthContext, db: web::Data<Db>) -> AppResult<web::Json<Value>> {
    ctx.require(SETTINGS_MANAGE)?;
    let cleared = settings::clear_allowlist(&db, &ctx).await?;
    Ok(web::Json(json!({"cleared": cleared})))
}
