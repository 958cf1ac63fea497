//! Which provider, model, base URL and key a call uses: the request's
//! overrides, the tenant's runtime override (agent row, else tenant-wide),
//! the environment's defaults, each within the allowlists. The checks and
//! their typed codes follow the reference's order.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::crypto::Binding;
use uuid::Uuid;

use crate::agents::AgentDef;
use crate::config::{self, AiConfig, ProviderDef, ProviderKind};
use crate::error::AiError;
use crate::schema::{ai_agent_runtime_overrides as ro, ai_tenant_model_allowlists as al};
use crate::state::AiState;

/// The key ring purpose of stored provider keys.
pub const KEY_PURPOSE: &str = "ai_assistant.provider_key";

/// A runtime-override row.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = ro)]
pub struct OverrideRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub agent_id: Option<String>,
    pub provider_id: Option<String>,
    pub model_id: Option<String>,
    pub base_url: Option<String>,
    pub api_key_encrypted: Option<String>,
    pub allowed_override_providers: Option<Value>,
    pub allowed_override_models_by_provider: Value,
    pub input_moderation: Option<bool>,
    pub loop_disabled: Option<bool>,
    pub loop_max_steps: Option<i32>,
    pub loop_max_tool_calls: Option<i32>,
    pub loop_max_wall_clock_ms: Option<i32>,
    pub loop_max_tokens: Option<i32>,
    pub loop_stop_when_json: Option<Value>,
    pub loop_active_tools_json: Option<Value>,
    pub updated_by_user_id: Option<Uuid>,
    pub created_at: time::OffsetDateTime,
    pub updated_at: time::OffsetDateTime,
}

/// The tenant's allowlist row.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = al)]
pub struct AllowlistRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub allowed_providers: Option<Value>,
    pub allowed_models_by_provider: Value,
    pub updated_by_user_id: Option<Uuid>,
    pub created_at: time::OffsetDateTime,
    pub updated_at: time::OffsetDateTime,
}

/// The runtime-override row for `agent` (`None`: the tenant-wide one).
pub async fn override_row(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organization: Option<Uuid>,
    agent: Option<&str>,
) -> Result<Option<OverrideRow>, AiError> {
    Ok(ro::table
        .filter(ro::tenant_id.eq(tenant))
        .filter(ro::organization_id.is_not_distinct_from(organization))
        .filter(ro::agent_id.is_not_distinct_from(agent))
        .select(OverrideRow::as_select())
        .first(conn)
        .await
        .optional()?)
}

pub async fn allowlist_row(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organization: Option<Uuid>,
) -> Result<Option<AllowlistRow>, AiError> {
    Ok(al::table
        .filter(al::tenant_id.eq(tenant))
        .filter(al::organization_id.is_not_distinct_from(organization))
        .select(AllowlistRow::as_select())
        .first(conn)
        .await
        .optional()?)
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value.as_array().map(|list| {
        list.iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect()
    })
}

/// The environment and tenant allowlists together.
#[derive(Clone, Debug, Default)]
pub struct Allowlist {
    pub tenant: Option<AllowlistRow>,
}

impl Allowlist {
    pub fn allows_provider(&self, config: &AiConfig, id: &str) -> bool {
        config.env_allows_provider(id)
            && self
                .tenant
                .as_ref()
                .and_then(|t| t.allowed_providers.as_ref().and_then(strings))
                .is_none_or(|list| list.iter().any(|p| config::normalize(p) == id))
    }

    pub fn allows_model(&self, config: &AiConfig, id: &str, model: &str) -> bool {
        config.env_allows_model(id, model)
            && self
                .tenant
                .as_ref()
                .and_then(|t| strings(&t.allowed_models_by_provider[id]))
                .is_none_or(|list| list.iter().any(|m| m == model))
    }
}

/// What a chat asks to override.
#[derive(Clone, Debug, Default)]
pub struct Requested {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
}

impl Requested {
    pub fn any(&self) -> bool {
        [&self.provider, &self.model, &self.base_url]
            .iter()
            .any(|v| v.as_deref().is_some_and(|s| !s.trim().is_empty()))
    }
}

/// A resolved provider call.
#[derive(Clone)]
pub struct Resolved {
    pub provider: &'static ProviderDef,
    pub model: String,
    pub base_url: String,
    pub api_key: String,
    /// `request_override`, `tenant_override`, `env_default`, `provider_default`.
    pub source: &'static str,
    /// Whether the base URL came from API input (then `guarded()`).
    pub base_url_from_input: bool,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field("provider", &self.provider.id)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

/// Splits `provider/model`.
fn split(model: &str) -> (Option<String>, String) {
    match model.split_once('/') {
        Some((p, m)) if config::provider(p).is_some() => {
            (Some(config::normalize(p)), m.to_string())
        }
        _ => (None, model.to_string()),
    }
}

/// The tenant's stored key for `provider` on `row`, decrypted.
fn stored_key(state: &AiState, row: &OverrideRow, provider: &str) -> Option<String> {
    let cipher = row.api_key_encrypted.as_ref()?;
    if row.provider_id.as_deref().map(config::normalize).as_deref() != Some(provider) {
        return None;
    }
    let record = row.id.to_string();
    state
        .keys
        .decrypt(
            cipher,
            &Binding {
                purpose: KEY_PURPOSE,
                tenant: row.tenant_id,
                record: &record,
            },
        )
        .ok()
}

/// Resolves the provider call for `agent` and the caller, checking the
/// request's overrides (400 `runtime_override_disabled`, `provider_unknown`,
/// `provider_not_configured`, `provider_not_allowlisted`,
/// `model_not_allowlisted`, `baseurl_not_allowlisted`); 500 when no provider
/// is configured at all.
pub async fn resolve(
    conn: &mut AsyncPgConnection,
    state: &AiState,
    ctx: &AuthContext,
    agent: &AgentDef,
    requested: &Requested,
) -> Result<Resolved, AiError> {
    resolve_scoped(
        conn,
        state,
        ctx,
        Some(agent.id),
        agent.allow_runtime_override,
        requested,
    )
    .await
}

/// [`resolve`] for `agent` (`None`: no agent, the tenant-wide row only)
/// and whether overrides apply to it.
pub async fn resolve_scoped(
    conn: &mut AsyncPgConnection,
    state: &AiState,
    ctx: &AuthContext,
    agent: Option<&str>,
    allow_runtime_override: bool,
    requested: &Requested,
) -> Result<Resolved, AiError> {
    let config = &state.config;
    if requested.any() && !allow_runtime_override {
        return Err(AiError::RuntimeOverrideDisabled);
    }
    let tenant = ctx.tenant_id.ok_or(AiError::TenantRequired)?;
    let org = ctx.organization_id();
    let own = match agent {
        Some(id) if allow_runtime_override => override_row(conn, tenant, org, Some(id)).await?,
        _ => None,
    };
    let row = match own {
        Some(row) => Some(row),
        None if allow_runtime_override => override_row(conn, tenant, org, None).await?,
        None => None,
    };
    let allowlist = Allowlist {
        tenant: allowlist_row(conn, tenant, org).await?,
    };
    let blank = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    let (req_provider_in_model, req_model) = match blank(&requested.model) {
        Some(m) => {
            let (p, m) = split(&m);
            (p, Some(m))
        }
        None => (None, None),
    };
    let req_provider = blank(&requested.provider)
        .map(|p| config::normalize(&p))
        .or(req_provider_in_model);
    if let Some(p) = &req_provider {
        let def = config::provider(p).ok_or(AiError::ProviderUnknown)?;
        let has_key = config.configured(def.id).is_some()
            || row
                .as_ref()
                .and_then(|r| stored_key(state, r, def.id))
                .is_some();
        if !has_key {
            return Err(AiError::ProviderNotConfigured);
        }
        if !allowlist.allows_provider(config, def.id) {
            return Err(AiError::ProviderNotAllowlisted);
        }
        if let Some(m) = &req_model
            && !allowlist.allows_model(config, def.id, m)
        {
            return Err(AiError::ModelNotAllowlisted);
        }
    }
    let req_base = blank(&requested.base_url);
    if let Some(url) = &req_base
        && !config.base_url_allowed(url)
    {
        return Err(AiError::BaseUrlNotAllowlisted);
    }
    // The provider: the request's, the tenant row's, the environment's
    // default, else the first configured one (registry order).
    let (row_provider, row_model) = match row.as_ref().and_then(|r| r.model_id.clone()) {
        Some(m) => split(&m),
        None => (None, String::new()),
    };
    let row_provider = row
        .as_ref()
        .and_then(|r| r.provider_id.as_deref().map(config::normalize))
        .or(row_provider);
    let (provider_id, source) = if let Some(p) = req_provider {
        (p, "request_override")
    } else if let Some(p) = row_provider.filter(|p| config::provider(p).is_some()) {
        (p, "tenant_override")
    } else if let Some(p) = config.default_provider.clone() {
        (p, "env_default")
    } else {
        let first = config
            .providers
            .iter()
            .find(|p| allowlist.allows_provider(config, p.def.id))
            .or(<[_]>::first(&config.providers))
            .ok_or(AiError::NoProvider)?;
        (first.def.id.to_string(), "provider_default")
    };
    let def = config::provider(&provider_id).ok_or(AiError::ProviderUnknown)?;
    let env = config.configured(def.id);
    let api_key = row
        .as_ref()
        .and_then(|r| stored_key(state, r, def.id))
        .or_else(|| env.map(|e| e.api_key.clone()))
        .ok_or(if source == "request_override" {
            AiError::ProviderNotConfigured
        } else {
            AiError::NoProvider
        })?;
    let model = req_model
        .or_else(|| (!row_model.is_empty()).then_some(row_model))
        .or_else(|| config.default_model.as_deref().map(|m| split(m).1))
        .unwrap_or_else(|| def.default_model.to_string());
    let row_base = row.as_ref().and_then(|r| r.base_url.clone());
    let base_url_from_input = req_base.is_some() || row_base.is_some();
    let base_url = req_base
        .or(row_base)
        .or_else(|| env.map(|e| e.base_url.clone()))
        .unwrap_or_else(|| def.default_base_url.to_string());
    if def.kind == ProviderKind::Unsupported {
        return Err(AiError::ProviderNotConfigured);
    }
    Ok(Resolved {
        provider: def,
        model,
        base_url: base_url.trim_end_matches('/').to_string(),
        api_key,
        source,
        base_url_from_input,
    })
}
