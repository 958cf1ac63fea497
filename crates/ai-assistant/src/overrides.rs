//! Per-tenant agent overrides: the loop override (stored and validated, as
//! the reference, and applied to chat turns by `looping`), the mutation policy (never above the code's) and the
//! prompt override (append-only versions).

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{LogEntry, record_batch};
use stoa_core::db::Db;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;
use validator::Validate;

use crate::agents::{AgentDef, MutationPolicy};
use crate::error::AiError;
use crate::providers::{self, OverrideRow};
use crate::schema::{
    ai_agent_mutation_policy_overrides as mp, ai_agent_prompt_overrides as po,
    ai_agent_runtime_overrides as ro,
};

/// Where an override write goes: the caller's tenant and selected
/// organization — `None` (under `__all__`) is the tenant level, which only
/// an administrator of every organization may write (the one
/// organization-scope rule, `AuthContext::require_organizations`: 403
/// `organization_out_of_scope`). *Why:* an administrator restricted to one
/// branch selecting `__all__` wrote tenant-wide loop and mutation-policy
/// overrides that bind every organization (issue 49's matrix); the tenant
/// settings and model allowlist (`crate::settings`) are written through it
/// too.
pub(crate) fn scope(ctx: &AuthContext) -> Result<(Uuid, Option<Uuid>), AppError> {
    let tenant = ctx.tenant_id.ok_or(AiError::TenantRequired)?;
    let organization = ctx.organization_id();
    ctx.require_organizations([organization])?;
    Ok((tenant, organization))
}

/// The action-log entry of a write of one override or setting row, in the
/// caller's tenant and organization.
pub(crate) fn entry(
    ctx: &AuthContext,
    kind: &str,
    id: Uuid,
    label: &str,
    after: Option<Value>,
) -> LogEntry {
    LogEntry {
        action_label: Some(label.into()),
        resource_kind: Some(kind.into()),
        resource_id: Some(id.to_string()),
        snapshot_after: after,
        tenant_id: ctx.tenant_id,
        organization_id: ctx.organization_id(),
        ..LogEntry::default()
    }
}

// ------------------------------------------------------------------ loop

/// `PUT .../loop-override`: each axis optional and nullable.
#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoopOverrideInput {
    pub loop_disabled: Option<bool>,
    #[validate(range(min = 1, max = 1000))]
    pub loop_max_steps: Option<i32>,
    #[validate(range(min = 1, max = 10000))]
    pub loop_max_tool_calls: Option<i32>,
    #[validate(range(min = 100, max = 3600000))]
    pub loop_max_wall_clock_ms: Option<i32>,
    #[validate(range(min = 1, max = 10000000))]
    pub loop_max_tokens: Option<i32>,
    #[schema(value_type = Option<Vec<Object>>)]
    pub loop_stop_when_json: Option<Value>,
    pub loop_active_tools_json: Option<Vec<String>>,
}

/// The loop columns of an agent's row.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoopOverride {
    pub id: Uuid,
    pub agent_id: String,
    pub loop_disabled: Option<bool>,
    pub loop_max_steps: Option<i32>,
    pub loop_max_tool_calls: Option<i32>,
    pub loop_max_wall_clock_ms: Option<i32>,
    pub loop_max_tokens: Option<i32>,
    #[schema(value_type = Option<Vec<Object>>)]
    pub loop_stop_when_json: Option<Value>,
    #[schema(value_type = Option<Vec<String>>)]
    pub loop_active_tools_json: Option<Value>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

fn loop_view(row: OverrideRow, agent: &str) -> Option<LoopOverride> {
    let set = row.loop_disabled.is_some()
        || row.loop_max_steps.is_some()
        || row.loop_max_tool_calls.is_some()
        || row.loop_max_wall_clock_ms.is_some()
        || row.loop_max_tokens.is_some()
        || row.loop_stop_when_json.is_some()
        || row.loop_active_tools_json.is_some();
    set.then(|| LoopOverride {
        id: row.id,
        agent_id: agent.into(),
        loop_disabled: row.loop_disabled,
        loop_max_steps: row.loop_max_steps,
        loop_max_tool_calls: row.loop_max_tool_calls,
        loop_max_wall_clock_ms: row.loop_max_wall_clock_ms,
        loop_max_tokens: row.loop_max_tokens,
        loop_stop_when_json: row.loop_stop_when_json,
        loop_active_tools_json: row.loop_active_tools_json,
        updated_at: row.updated_at,
    })
}

pub async fn get_loop(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    agent: &AgentDef,
) -> Result<Option<LoopOverride>, AppError> {
    let Some(tenant) = ctx.tenant_id else {
        return Ok(None);
    };
    let row = providers::override_row(conn, tenant, ctx.organization_id(), Some(agent.id)).await?;
    Ok(row.and_then(|r| loop_view(r, agent.id)))
}

fn check_loop(agent: &AgentDef, input: &LoopOverrideInput) -> Result<(), AiError> {
    if let Some(stop) = &input.loop_stop_when_json {
        let Some(items) = stop.as_array() else {
            return Err(AiError::InvalidLoopOverride(
                "loopStopWhenJson must be an array".into(),
            ));
        };
        for item in items {
            let ok = match item["kind"].as_str() {
                Some("stepCount") => item["count"].as_u64().is_some_and(|c| c >= 1),
                Some("hasToolCall") => item["toolName"].as_str().is_some_and(|t| !t.is_empty()),
                _ => false,
            };
            if !ok {
                return Err(AiError::InvalidLoopOverride(
                    "loopStopWhenJson items are {kind:\"stepCount\",count>=1} or {kind:\"hasToolCall\",toolName}".into(),
                ));
            }
        }
    }
    if let Some(tools) = &input.loop_active_tools_json
        && let Some(bad) = tools
            .iter()
            .find(|t| t.is_empty() || !agent.allowed_tools.contains(&t.as_str()))
    {
        return Err(AiError::InvalidLoopOverride(format!(
            "loopActiveToolsJson: {bad} is not an allowed tool of {}",
            agent.id
        )));
    }
    Ok(())
}

/// Writes all seven loop columns of the agent's row (omitted = NULL).
pub async fn put_loop(
    db: &Db,
    ctx: &AuthContext,
    agent: &AgentDef,
    input: LoopOverrideInput,
) -> Result<Option<LoopOverride>, AppError> {
    check_loop(agent, &input)?;
    let (tenant, org) = scope(ctx)?;
    let actor = ctx.actor();
    let tools = input.loop_active_tools_json.map(|t| json!(t));
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let now = OffsetDateTime::now_utc();
        let columns = (
            ro::loop_disabled.eq(input.loop_disabled),
            ro::loop_max_steps.eq(input.loop_max_steps),
            ro::loop_max_tool_calls.eq(input.loop_max_tool_calls),
            ro::loop_max_wall_clock_ms.eq(input.loop_max_wall_clock_ms),
            ro::loop_max_tokens.eq(input.loop_max_tokens),
            ro::loop_stop_when_json.eq(&input.loop_stop_when_json),
            ro::loop_active_tools_json.eq(&tools),
        );
        let row: OverrideRow =
            match providers::override_row(conn, tenant, org, Some(agent.id)).await? {
                Some(existing) => {
                    diesel::update(ro::table.find(existing.id))
                        .set((
                            columns,
                            ro::updated_at.eq(now),
                            ro::updated_by_user_id.eq(ctx.user_id),
                        ))
                        .returning(OverrideRow::as_select())
                        .get_result(conn)
                        .await?
                }
                None => {
                    diesel::insert_into(ro::table)
                        .values((
                            ro::id.eq(Uuid::new_v4()),
                            ro::tenant_id.eq(tenant),
                            ro::organization_id.eq(org),
                            ro::agent_id.eq(agent.id),
                            columns,
                            ro::updated_by_user_id.eq(ctx.user_id),
                        ))
                        .returning(OverrideRow::as_select())
                        .get_result(conn)
                        .await?
                }
            };
        let e = entry(
            ctx,
            "ai_assistant.loop_override",
            row.id,
            "Set agent loop override",
            None,
        );
        record_batch(conn, &actor, vec![("ai_assistant.loop_override.update", e)]).await?;
        Ok(loop_view(row, agent.id))
    })
    .await
}

/// Nulls the seven loop columns; whether a row was there.
pub async fn clear_loop(db: &Db, ctx: &AuthContext, agent: &AgentDef) -> Result<bool, AppError> {
    let (tenant, org) = scope(ctx)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let Some(row) = providers::override_row(conn, tenant, org, Some(agent.id)).await? else {
            return Ok(false);
        };
        diesel::update(ro::table.find(row.id))
            .set((
                ro::loop_disabled.eq(None::<bool>),
                ro::loop_max_steps.eq(None::<i32>),
                ro::loop_max_tool_calls.eq(None::<i32>),
                ro::loop_max_wall_clock_ms.eq(None::<i32>),
                ro::loop_max_tokens.eq(None::<i32>),
                ro::loop_stop_when_json.eq(None::<Value>),
                ro::loop_active_tools_json.eq(None::<Value>),
                ro::updated_at.eq(OffsetDateTime::now_utc()),
            ))
            .execute(conn)
            .await?;
        let e = entry(
            ctx,
            "ai_assistant.loop_override",
            row.id,
            "Clear agent loop override",
            None,
        );
        record_batch(conn, &actor, vec![("ai_assistant.loop_override.delete", e)]).await?;
        Ok(true)
    })
    .await
}

// -------------------------------------------------------- mutation policy

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MutationPolicyInput {
    /// `read-only`, `destructive-confirm-required` or `confirm-required`.
    pub mutation_policy: MutationPolicy,
    #[validate(length(max = 2000))]
    pub notes: Option<String>,
}

#[derive(Debug, Serialize, ToSchema, Queryable, Selectable)]
#[diesel(table_name = mp)]
#[serde(rename_all = "camelCase")]
pub struct PolicyOverride {
    pub id: Uuid,
    pub agent_id: String,
    pub mutation_policy: String,
    pub notes: Option<String>,
    pub created_by_user_id: Option<Uuid>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

pub fn declared(agent: &AgentDef) -> MutationPolicy {
    if agent.read_only {
        MutationPolicy::ReadOnly
    } else {
        agent.mutation_policy
    }
}

pub async fn get_policy(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    agent: &AgentDef,
) -> Result<Option<PolicyOverride>, AppError> {
    let Some(tenant) = ctx.tenant_id else {
        return Ok(None);
    };
    Ok(mp::table
        .filter(mp::tenant_id.eq(tenant))
        .filter(mp::organization_id.is_not_distinct_from(ctx.organization_id()))
        .filter(mp::agent_id.eq(agent.id))
        .select(PolicyOverride::as_select())
        .first(conn)
        .await
        .optional()?)
}

/// Sets the override; 400 `escalation_not_allowed` above the code's policy.
pub async fn set_policy(
    db: &Db,
    ctx: &AuthContext,
    agent: &AgentDef,
    input: MutationPolicyInput,
) -> Result<PolicyOverride, AppError> {
    let code = declared(agent);
    if input.mutation_policy.rank() > code.rank() {
        return Err(AiError::EscalationNotAllowed {
            declared: code.as_str(),
            requested: input.mutation_policy.as_str().into(),
        }
        .into());
    }
    let (tenant, org) = scope(ctx)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let now = OffsetDateTime::now_utc();
        let existing = get_policy(conn, ctx, agent).await?;
        let row: PolicyOverride = match existing {
            Some(e) => {
                diesel::update(mp::table.find(e.id))
                    .set((
                        mp::mutation_policy.eq(input.mutation_policy.as_str()),
                        mp::notes.eq(&input.notes),
                        mp::updated_at.eq(now),
                    ))
                    .returning(PolicyOverride::as_select())
                    .get_result(conn)
                    .await?
            }
            None => {
                diesel::insert_into(mp::table)
                    .values((
                        mp::id.eq(Uuid::new_v4()),
                        mp::tenant_id.eq(tenant),
                        mp::organization_id.eq(org),
                        mp::agent_id.eq(agent.id),
                        mp::mutation_policy.eq(input.mutation_policy.as_str()),
                        mp::notes.eq(&input.notes),
                        mp::created_by_user_id.eq(ctx.user_id),
                    ))
                    .returning(PolicyOverride::as_select())
                    .get_result(conn)
                    .await?
            }
        };
        let e = entry(
            ctx,
            "ai_assistant.mutation_policy",
            row.id,
            "Set agent mutation policy",
            Some(json!({"agentId": agent.id, "mutationPolicy": row.mutation_policy})),
        );
        record_batch(
            conn,
            &actor,
            vec![("ai_assistant.mutation_policy.update", e)],
        )
        .await?;
        Ok(row)
    })
    .await
}

pub async fn clear_policy(db: &Db, ctx: &AuthContext, agent: &AgentDef) -> Result<bool, AppError> {
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let Some(row) = get_policy(conn, ctx, agent).await? else {
            return Ok(false);
        };
        diesel::delete(mp::table.find(row.id)).execute(conn).await?;
        let e = entry(
            ctx,
            "ai_assistant.mutation_policy",
            row.id,
            "Clear agent mutation policy",
            None,
        );
        record_batch(
            conn,
            &actor,
            vec![("ai_assistant.mutation_policy.delete", e)],
        )
        .await?;
        Ok(true)
    })
    .await
}

// ---------------------------------------------------------------- prompt

/// Keys a prompt override may not set (they are policy, not prose).
pub const RESERVED: &[&str] = &[
    "mutationPolicy",
    "readOnly",
    "allowedTools",
    "acceptedMediaTypes",
];

/// The most versions `GET .../prompt-override` lists.
pub const MAX_VERSIONS: i64 = 10;

#[derive(Debug, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptOverrideInput {
    pub sections: Option<std::collections::BTreeMap<String, String>>,
    /// Alias of `sections`.
    pub overrides: Option<std::collections::BTreeMap<String, String>>,
    #[validate(length(max = 2000))]
    pub notes: Option<String>,
}

#[derive(Debug, Serialize, ToSchema, Queryable, Selectable)]
#[diesel(table_name = po)]
#[serde(rename_all = "camelCase")]
pub struct PromptVersion {
    pub id: Uuid,
    pub agent_id: String,
    pub version: i32,
    #[schema(value_type = Object)]
    pub sections: Value,
    pub notes: Option<String>,
    pub created_by_user_id: Option<Uuid>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

/// 400 `reserved_key` naming every reserved key among `keys` (trimmed,
/// case-insensitive).
pub fn check_reserved<'a>(keys: impl Iterator<Item = &'a String>) -> Result<(), AiError> {
    let found: Vec<String> = keys
        .filter(|k| RESERVED.iter().any(|r| r.eq_ignore_ascii_case(k.trim())))
        .cloned()
        .collect();
    if found.is_empty() {
        Ok(())
    } else {
        Err(AiError::ReservedKey(found))
    }
}

pub async fn prompt_versions(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    agent: &AgentDef,
) -> Result<Vec<PromptVersion>, AppError> {
    let Some(tenant) = ctx.tenant_id else {
        return Ok(Vec::new());
    };
    Ok(po::table
        .filter(po::tenant_id.eq(tenant))
        .filter(po::organization_id.is_not_distinct_from(ctx.organization_id()))
        .filter(po::agent_id.eq(agent.id))
        .order(po::version.desc())
        .limit(MAX_VERSIONS)
        .select(PromptVersion::as_select())
        .load(conn)
        .await?)
}

/// Appends a version (latest + 1); blank sections are dropped.
pub async fn add_prompt(
    db: &Db,
    ctx: &AuthContext,
    agent: &AgentDef,
    sections: std::collections::BTreeMap<String, String>,
    notes: Option<String>,
) -> Result<PromptVersion, AppError> {
    let (tenant, org) = scope(ctx)?;
    let sections: serde_json::Map<String, Value> = sections
        .into_iter()
        .filter(|(_, v)| !v.trim().is_empty())
        .map(|(k, v)| (k.trim().to_string(), Value::String(v)))
        .collect();
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        // One writer per agent at a time: the version is latest + 1.
        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1))")
            .bind::<diesel::sql_types::Text, _>(format!("ai_prompt:{tenant}:{org:?}:{}", agent.id))
            .execute(conn)
            .await?;
        let latest: Option<i32> = po::table
            .filter(po::tenant_id.eq(tenant))
            .filter(po::organization_id.is_not_distinct_from(org))
            .filter(po::agent_id.eq(agent.id))
            .select(diesel::dsl::max(po::version))
            .first(conn)
            .await?;
        let row: PromptVersion = diesel::insert_into(po::table)
            .values((
                po::id.eq(Uuid::new_v4()),
                po::tenant_id.eq(tenant),
                po::organization_id.eq(org),
                po::agent_id.eq(agent.id),
                po::version.eq(latest.unwrap_or(0) + 1),
                po::sections.eq(Value::Object(sections)),
                po::notes.eq(&notes),
                po::created_by_user_id.eq(ctx.user_id),
            ))
            .returning(PromptVersion::as_select())
            .get_result(conn)
            .await?;
        let e = entry(
            ctx,
            "ai_assistant.prompt_override",
            row.id,
            "Add agent prompt override",
            None,
        );
        record_batch(
            conn,
            &actor,
            vec![("ai_assistant.prompt_override.create", e)],
        )
        .await?;
        Ok(row)
    })
    .await
}
