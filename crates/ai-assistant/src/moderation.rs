//! Input moderation before a chat turn, as the reference: on when the
//! agent's runtime-override row says so, else the tenant-wide row, else
//! `OM_AI_INPUT_MODERATION`. Only the `openai` provider moderates, and only
//! a non-empty latest user message: `POST <baseURL>/moderations` (3 s, one
//! retry on a network failure or a 5xx). Flagged input is refused with 400
//! `moderation_blocked` after a row in `ai_moderation_flags` (categories
//! and scores, never the text) and `ai_assistant.moderation_flag.created`;
//! a moderation endpoint that cannot answer lets the turn through.

use std::time::Duration;

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{LogEntry, record_batch};
use stoa_core::db::Db;
use stoa_core::outbound::OutboundError;
use uuid::Uuid;

use crate::agents::AgentDef;
use crate::error::AiError;
use crate::providers::{self, Resolved};
use crate::schema::ai_moderation_flags as mf;
use crate::state::AiState;

const TIMEOUT: Duration = Duration::from_secs(3);

/// Whether moderation is on for `agent` in the caller's tenant.
pub async fn enabled(
    conn: &mut AsyncPgConnection,
    state: &AiState,
    ctx: &AuthContext,
    agent: &AgentDef,
) -> Result<bool, AiError> {
    let Some(tenant) = ctx.tenant_id else {
        return Ok(state.config.input_moderation);
    };
    let org = ctx.organization_id();
    for scope in [Some(agent.id), None] {
        if let Some(on) = providers::override_row(conn, tenant, org, scope)
            .await?
            .and_then(|r| r.input_moderation)
        {
            return Ok(on);
        }
    }
    Ok(state.config.input_moderation)
}

#[derive(Debug, Deserialize)]
struct Answer {
    #[serde(default)]
    results: Vec<Verdict>,
}

#[derive(Debug, Deserialize)]
struct Verdict {
    #[serde(default)]
    flagged: bool,
    #[serde(default)]
    categories: Map<String, Value>,
    #[serde(default)]
    category_scores: Map<String, Value>,
}

/// Asks the provider; `None` when it could not answer.
async fn ask(state: &AiState, resolved: &Resolved, input: &str) -> Option<Verdict> {
    let client = if resolved.base_url_from_input {
        state.outbound.guarded()
    } else {
        state.outbound.trusted()
    };
    let url = format!("{}/moderations", resolved.base_url);
    let body = json!({"model": state.config.moderation_model, "input": input});
    for attempt in 0..2 {
        let answer = match client.post(&url) {
            Ok(request) => {
                request
                    .header("authorization", &format!("Bearer {}", resolved.api_key))
                    .json(&body)
                    .deadline(TIMEOUT)
                    .send_json::<Answer>()
                    .await
            }
            Err(err) => Err(err),
        };
        match answer {
            Ok(answer) => return answer.results.into_iter().next(),
            // A network failure or a 5xx is tried once more.
            Err(OutboundError::Request(_) | OutboundError::Timeout) if attempt == 0 => {}
            Err(OutboundError::Status { status }) if status >= 500 && attempt == 0 => {}
            Err(err) => {
                tracing::warn!(error = %err, "ai input moderation unavailable");
                return None;
            }
        }
    }
    None
}

/// Refuses the turn when moderation is on and flags `input`.
pub async fn check(
    db: &Db,
    state: &AiState,
    ctx: &AuthContext,
    agent: &AgentDef,
    resolved: &Resolved,
    input: &str,
) -> Result<(), AppError> {
    if resolved.provider.id != "openai" || input.trim().is_empty() {
        return Ok(());
    }
    {
        let mut conn = db.conn().await?;
        if !enabled(&mut conn, state, ctx, agent).await? {
            return Ok(());
        }
    }
    let Some(verdict) = ask(state, resolved, input).await else {
        return Ok(());
    };
    if !verdict.flagged {
        return Ok(());
    }
    let categories: Map<String, Value> = verdict
        .categories
        .iter()
        .map(|(name, flagged)| {
            let score = verdict
                .category_scores
                .get(name)
                .cloned()
                .unwrap_or(Value::Null);
            (
                name.clone(),
                json!({"flagged": flagged.as_bool().unwrap_or(false), "score": score}),
            )
        })
        .collect();
    let flagged: Vec<&String> = verdict
        .categories
        .iter()
        .filter(|(_, f)| f.as_bool() == Some(true))
        .map(|(name, _)| name)
        .collect();
    let tenant = ctx.tenant_id.ok_or(AiError::TenantRequired)?;
    let org = ctx.organization_id();
    let id = Uuid::new_v4();
    let event = json!({
        "id": id,
        "tenantId": tenant,
        "organizationId": org,
        "agentId": agent.id,
        "userId": ctx.user_id,
        "categories": flagged,
    });
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        diesel::insert_into(mf::table)
            .values((
                mf::id.eq(id),
                mf::tenant_id.eq(tenant),
                mf::organization_id.eq(org),
                mf::agent_id.eq(agent.id),
                mf::user_id.eq(ctx.user_id),
                mf::provider_id.eq(resolved.provider.id),
                mf::model_id.eq(&state.config.moderation_model),
                mf::categories.eq(Value::Object(categories)),
            ))
            .execute(conn)
            .await?;
        let entry = LogEntry {
            action_label: Some("Flag AI chat input".into()),
            resource_kind: Some("ai_assistant.moderation_flag".into()),
            resource_id: Some(id.to_string()),
            tenant_id: Some(tenant),
            organization_id: org,
            ..LogEntry::default()
        }
        .with_event("ai_assistant.moderation_flag.created", event);
        record_batch(
            conn,
            &actor,
            vec![("ai_assistant.moderation_flags.create", entry)],
        )
        .await?;
        Ok::<(), AppError>(())
    })
    .await?;
    Err(AiError::ModerationBlocked.into())
}
