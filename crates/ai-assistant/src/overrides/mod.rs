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

mod loops;
mod policy;
mod prompts;

pub use loops::*;
pub use policy::*;
pub use prompts::*;

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
