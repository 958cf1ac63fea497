//! The policy gate (the reference's `agent-policy`): the agent, its
//! features, then per tool the whitelist, registration, the tool's features
//! and the mutation policy. First failure wins.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_acl::{AiTool, AuthContext, Registry, ToolKind};
use uuid::Uuid;

use crate::agents::{self, AgentDef, MutationPolicy};
use crate::error::AiError;
use crate::schema::ai_agent_mutation_policy_overrides as mp;
use crate::state::AiState;

/// The agent `id` for the caller: 400 malformed id, 404 unknown, 403 when
/// the caller lacks one of its required features.
pub fn agent_for(
    state: &AiState,
    ctx: &AuthContext,
    id: &str,
) -> Result<&'static AgentDef, AiError> {
    let agent = known_agent(state, id)?;
    if !agent.required_features.iter().all(|f| ctx.has(f)) {
        return Err(AiError::AgentFeaturesDenied);
    }
    Ok(agent)
}

/// The agent `id` (400 malformed, 404 unknown), whatever the caller holds.
pub fn known_agent(state: &AiState, id: &str) -> Result<&'static AgentDef, AiError> {
    if !agents::valid_id(id) {
        return Err(AiError::InvalidAgentId);
    }
    state.agent(id).ok_or(AiError::AgentUnknown)
}

/// The tenant's override of `agent`'s mutation policy, if any (a stored
/// value that no longer parses is ignored).
pub async fn policy_override(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organization: Option<Uuid>,
    agent: &str,
) -> Result<Option<MutationPolicy>, AiError> {
    let stored: Option<String> = mp::table
        .filter(mp::tenant_id.eq(tenant))
        .filter(mp::organization_id.is_not_distinct_from(organization))
        .filter(mp::agent_id.eq(agent))
        .select(mp::mutation_policy)
        .first(conn)
        .await
        .optional()?;
    Ok(stored.as_deref().and_then(MutationPolicy::parse))
}

/// The effective policy: the more restrictive of the code's and the
/// override's (a read-only agent is read-only whatever is stored).
pub async fn effective_policy(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    agent: &AgentDef,
) -> Result<MutationPolicy, AiError> {
    let declared = if agent.read_only {
        MutationPolicy::ReadOnly
    } else {
        agent.mutation_policy
    };
    let tenant = ctx.tenant_id.ok_or(AiError::TenantRequired)?;
    Ok(
        match policy_override(conn, tenant, ctx.organization_id(), agent.id).await? {
            Some(o) => declared.min(o),
            None => declared,
        },
    )
}

/// Where the record a mutation would change lives, as its tool's loader
/// reports it (`organizationId` beside or inside `before`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordScope {
    /// In this organization (`None`: a record of no organization).
    Organization(Option<Uuid>),
    /// The tool has no loader, or the loader does not say.
    Unknown,
}

impl RecordScope {
    /// The scope of a loader's answer `{recordId, entityType, recordVersion,
    /// before}`: `organizationId` at the top, else `before.organizationId`
    /// (or `organization_id`). A value that is no uuid reads as unknown.
    pub fn of(loaded: Option<&Value>) -> Self {
        let Some(loaded) = loaded else {
            return Self::Unknown;
        };
        let found = [
            loaded.get("organizationId"),
            loaded.get("before").and_then(|b| b.get("organizationId")),
            loaded.get("before").and_then(|b| b.get("organization_id")),
        ]
        .into_iter()
        .flatten()
        .next();
        match found {
            Some(Value::Null) => Self::Organization(None),
            Some(Value::String(s)) => s
                .parse()
                .map_or(Self::Unknown, |id| Self::Organization(Some(id))),
            _ => Self::Unknown,
        }
    }
}

/// The policy for a mutation of a record in `record`: the caller's
/// effective policy (its selection's override) and the override of the
/// record's own organization, whichever is more restrictive, whatever the
/// selection (`__all__` selects no organization, so its lookup alone never
/// sees an organization's override). A record that cannot be placed takes
/// the most restrictive override of the agent anywhere in the tenant.
pub async fn policy_for_record(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    agent: &AgentDef,
    record: RecordScope,
) -> Result<MutationPolicy, AiError> {
    let selected = effective_policy(conn, ctx, agent).await?;
    let tenant = ctx.tenant_id.ok_or(AiError::TenantRequired)?;
    let stored: Vec<String> = match record {
        RecordScope::Organization(org) if org == ctx.organization_id() => return Ok(selected),
        RecordScope::Organization(org) => {
            mp::table
                .filter(mp::tenant_id.eq(tenant))
                .filter(mp::organization_id.is_not_distinct_from(org))
                .filter(mp::agent_id.eq(agent.id))
                .select(mp::mutation_policy)
                .load(conn)
                .await?
        }
        RecordScope::Unknown => {
            mp::table
                .filter(mp::tenant_id.eq(tenant))
                .filter(mp::agent_id.eq(agent.id))
                .select(mp::mutation_policy)
                .load(conn)
                .await?
        }
    };
    Ok(stored
        .iter()
        .filter_map(|s| MutationPolicy::parse(s))
        .fold(selected, MutationPolicy::min))
}

/// A tool `agent` may offer the caller under `policy`.
pub fn tool_for<'r>(
    registry: &'r Registry,
    ctx: &AuthContext,
    agent: &AgentDef,
    name: &str,
    policy: MutationPolicy,
) -> Result<&'r AiTool, AiError> {
    if !agent.allowed_tools.contains(&name) {
        return Err(AiError::ToolNotWhitelisted);
    }
    let tool = registry.ai_tool(name).ok_or(AiError::ToolUnknown)?;
    if !tool.features.iter().all(|f| ctx.has(f)) {
        return Err(AiError::ToolFeaturesDenied);
    }
    if tool.kind == ToolKind::Mutation {
        if agent.read_only {
            return Err(AiError::MutationBlockedByReadonly);
        }
        if policy == MutationPolicy::ReadOnly {
            return Err(AiError::MutationBlockedByPolicy);
        }
    }
    Ok(tool)
}

/// Every tool `agent` offers the caller (the ones failing the gate are
/// silently left out, as the reference does).
pub fn offered<'r>(
    registry: &'r Registry,
    ctx: &AuthContext,
    agent: &AgentDef,
    policy: MutationPolicy,
) -> Vec<&'r AiTool> {
    agent
        .allowed_tools
        .iter()
        .filter_map(|name| tool_for(registry, ctx, agent, name, policy).ok())
        .collect()
}
