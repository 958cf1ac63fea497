//! Keys for tooling: `mcp-key` (a persistent API key with the caller's
//! roles, created through the API-keys module's service) and `session-key`
//! (a short-lived `_sessionToken` that tool execution accepts for the user
//! it was issued to).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{LogEntry, record_batch};
use stoa_core::db::Db;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::AiError;
use crate::schema::ai_session_tokens as st;
use crate::state::AiState;

/// How long a session token lives (the reference's 120 minutes).
pub const SESSION_TTL: time::Duration = time::Duration::minutes(120);

fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Issues a session token for the signed-in user (stored as its hash).
pub async fn issue_session_token(
    db: &Db,
    ctx: &AuthContext,
) -> Result<(String, OffsetDateTime), AppError> {
    let user = ctx.user_id.ok_or_else(AppError::forbidden)?;
    let tenant = ctx.tenant().map_err(|_| AiError::TenantRequired)?;
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(AppError::internal)?;
    let token = format!("sess_{}", hex::encode(bytes));
    let expires = OffsetDateTime::now_utc() + SESSION_TTL;
    let id = Uuid::new_v4();
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    let token_hash = hash(&token);
    diesel_async::AsyncConnection::transaction(&mut *conn, async |conn| {
        diesel::insert_into(st::table)
            .values((
                st::id.eq(id),
                st::tenant_id.eq(tenant),
                st::organization_id.eq(ctx.organization_id()),
                st::user_id.eq(user),
                st::token_hash.eq(&token_hash),
                st::expires_at.eq(expires),
            ))
            .execute(conn)
            .await?;
        let entry = LogEntry {
            action_label: Some("Issue AI session key".into()),
            resource_kind: Some("ai_assistant.session_token".into()),
            resource_id: Some(id.to_string()),
            tenant_id: Some(tenant),
            organization_id: ctx.organization_id(),
            ..LogEntry::default()
        };
        record_batch(
            conn,
            &actor,
            vec![("ai_assistant.session_keys.create", entry)],
        )
        .await?;
        Ok::<_, AppError>(())
    })
    .await?;
    Ok((token, expires))
}

/// `Ok` when `token` is a live session token of the caller (same user and
/// tenant); else 400 `SESSION_EXPIRED` (a token never lends another user's grants).
pub async fn check_session_token(
    conn: &mut AsyncPgConnection,
    _state: &AiState,
    ctx: &AuthContext,
    token: &Value,
) -> Result<(), AppError> {
    let expired = || {
        AppError::bad_request("Session token is invalid or expired").with_code("SESSION_EXPIRED")
    };
    let (Some(token), Some(user), Some(tenant)) = (token.as_str(), ctx.user_id, ctx.tenant_id)
    else {
        return Err(expired());
    };
    let found: Option<Uuid> = st::table
        .filter(st::token_hash.eq(hash(token)))
        .filter(st::tenant_id.eq(tenant))
        .filter(st::user_id.eq(user))
        .filter(st::expires_at.gt(OffsetDateTime::now_utc()))
        .select(st::id)
        .first(conn)
        .await
        .optional()?;
    found.map(|_| ()).ok_or_else(expired)
}

/// Creates the MCP API key: the caller's roles, tenant and organization, no
/// expiry, through the API-keys service (its checks and command apply).
pub async fn create_mcp_key(
    db: &Db,
    state: &AiState,
    ctx: &AuthContext,
    name: Option<String>,
    description: Option<String>,
) -> Result<Value, AppError> {
    let today = OffsetDateTime::now_utc().date();
    let name = name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| format!("MCP Config - {today}"));
    let input = stoa_api_keys::model::CreateApiKey {
        name,
        description,
        tenant_id: None,
        organization_id: ctx.organization_id(),
        roles: Some(ctx.acl.roles.clone()),
        expires_at: None,
    };
    let created = stoa_api_keys::service::create(
        db,
        state.roles.clone(),
        state.organizations.clone(),
        ctx.clone(),
        input,
    )
    .await?;
    Ok(json!({
        "id": created.id,
        "name": created.name,
        "keyPrefix": created.key_prefix,
        "secret": created.secret,
        "tenantId": created.tenant_id,
        "organizationId": created.organization_id,
        // The reference answers the role ids the key carries.
        "roles": created.roles.iter().map(|r| r.id.to_string()).collect::<Vec<_>>(),
    }))
}
