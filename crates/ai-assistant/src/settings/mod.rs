//! Tenant settings: the runtime override (provider, model, base URL, a
//! stored provider key, allowed-override lists, input moderation), per
//! agent or tenant-wide, and the tenant's model allowlist. A stored key is
//! encrypted with the key ring, bound to its row and tenant, and never
//! returned: answers say only whether one is set.

use std::collections::BTreeMap;

use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::record_batch;
use stoa_core::crypto::Binding;
use stoa_core::db::Db;
use stoa_core::serde_util::double_option;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;
use validator::Validate;

use crate::config;
use crate::error::AiError;
use crate::overrides::{entry, scope};
use crate::providers::{self, AllowlistRow, KEY_PURPOSE, OverrideRow};
use crate::schema::{ai_agent_runtime_overrides as ro, ai_tenant_model_allowlists as al};
use crate::state::AiState;

mod allowlist;
mod read;

pub use allowlist::*;
pub use read::*;

/// `PUT /ai_assistant/settings`: absent keys keep, `null` clears.
#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsInput {
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    #[validate(length(max = 64))]
    pub provider_id: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    #[validate(length(max = 256))]
    pub model_id: Option<Option<String>>,
    #[serde(default, rename = "baseURL", deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    #[validate(length(max = 2048))]
    pub base_url: Option<Option<String>>,
    /// `null` or absent: the tenant-wide default.
    #[validate(length(max = 128))]
    pub agent_id: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Vec<String>>)]
    pub allowed_override_providers: Option<Option<Vec<String>>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Object>)]
    pub allowed_override_models_by_provider: Option<Option<BTreeMap<String, Vec<String>>>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<bool>)]
    pub input_moderation: Option<Option<bool>>,
    /// A provider key for this tenant (stored encrypted, never returned;
    /// `null` removes it).
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    #[validate(length(max = 512))]
    pub api_key: Option<Option<String>>,
}

/// A saved runtime override, without its key.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SavedSettings {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub agent_id: Option<String>,
    pub provider_id: Option<String>,
    pub model_id: Option<String>,
    #[serde(rename = "baseURL")]
    pub base_url: Option<String>,
    #[schema(value_type = Option<Vec<String>>)]
    pub allowed_override_providers: Option<Value>,
    #[schema(value_type = Object)]
    pub allowed_override_models_by_provider: Value,
    pub input_moderation: Option<bool>,
    /// Whether a provider key is stored (the key itself is never returned).
    pub api_key_configured: bool,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<OverrideRow> for SavedSettings {
    fn from(r: OverrideRow) -> Self {
        Self {
            id: r.id,
            tenant_id: r.tenant_id,
            organization_id: r.organization_id,
            agent_id: r.agent_id,
            provider_id: r.provider_id,
            model_id: r.model_id,
            base_url: r.base_url,
            allowed_override_providers: r.allowed_override_providers,
            allowed_override_models_by_provider: r.allowed_override_models_by_provider,
            input_moderation: r.input_moderation,
            api_key_configured: r.api_key_encrypted.is_some(),
            updated_at: r.updated_at,
        }
    }
}

fn blank(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// Upserts the runtime override, checking in the reference's order: base
/// URL, provider and model within the allowlists, allowed-override lists
/// only with an agent (and within the allowlists), a registered provider.
pub async fn put(
    db: &Db,
    state: &AiState,
    ctx: &AuthContext,
    input: SettingsInput,
) -> Result<SavedSettings, AppError> {
    let (tenant, org) = scope(ctx)?;
    let cfg = &state.config;
    let agent_id = blank(input.agent_id.clone());
    if let Some(id) = &agent_id
        && state.agent(id).is_none()
    {
        return Err(AiError::Validation(format!("Unknown agent: {id}")).into());
    }
    let base_url = input.base_url.clone().map(blank);
    if let Some(Some(url)) = &base_url
        && !cfg.base_url_allowed(url)
    {
        return Err(AiError::BaseUrlNotAllowlisted.into());
    }
    let provider = input
        .provider_id
        .clone()
        .map(|p| blank(p).map(|p| config::normalize(&p)));
    let model = input.model_id.clone().map(blank);
    let mut conn = db.conn().await?;
    let allowlist = providers::Allowlist {
        tenant: providers::allowlist_row(&mut conn, tenant, org).await?,
    };
    if let Some(Some(p)) = &provider {
        if !allowlist.allows_provider(cfg, p) {
            return Err(AiError::ProviderNotAllowlisted.into());
        }
        if let Some(Some(m)) = &model
            && !allowlist.allows_model(cfg, p, m)
        {
            return Err(AiError::ModelNotAllowlisted.into());
        }
    }
    let lists_given = matches!(input.allowed_override_providers, Some(Some(_)))
        || matches!(input.allowed_override_models_by_provider, Some(Some(_)));
    if lists_given && agent_id.is_none() {
        return Err(AiError::AgentRequired.into());
    }
    if let Some(Some(list)) = &input.allowed_override_providers {
        for p in list {
            let p = config::normalize(p);
            if config::provider(&p).is_none() {
                return Err(AiError::ProviderUnknown.into());
            }
            if !allowlist.allows_provider(cfg, &p) {
                return Err(AiError::ProviderNotAllowlisted.into());
            }
        }
    }
    if let Some(Some(map)) = &input.allowed_override_models_by_provider {
        for (p, models) in map {
            let p = config::normalize(p);
            if config::provider(&p).is_none() {
                return Err(AiError::ProviderUnknown.into());
            }
            if models.iter().any(|m| !allowlist.allows_model(cfg, &p, m)) {
                return Err(AiError::ModelNotAllowlisted.into());
            }
        }
    }
    if let Some(Some(p)) = &provider
        && config::provider(p).is_none()
    {
        return Err(AiError::ProviderUnknown.into());
    }
    let actor = ctx.actor();
    conn.transaction(async |conn| {
        let now = OffsetDateTime::now_utc();
        let existing = providers::override_row(conn, tenant, org, agent_id.as_deref()).await?;
        let id = existing.as_ref().map_or_else(Uuid::new_v4, |r| r.id);
        let mut row = match existing {
            Some(row) => row,
            None => {
                diesel::insert_into(ro::table)
                    .values((
                        ro::id.eq(id),
                        ro::tenant_id.eq(tenant),
                        ro::organization_id.eq(org),
                        ro::agent_id.eq(&agent_id),
                        ro::updated_by_user_id.eq(ctx.user_id),
                    ))
                    .returning(OverrideRow::as_select())
                    .get_result(conn)
                    .await?
            }
        };
        if let Some(p) = provider {
            row.provider_id = p;
        }
        if let Some(m) = model {
            row.model_id = m;
        }
        if let Some(b) = base_url {
            row.base_url = b;
        }
        if let Some(list) = input.allowed_override_providers {
            row.allowed_override_providers = list.map(|l| json!(l));
        }
        if let Some(map) = input.allowed_override_models_by_provider {
            row.allowed_override_models_by_provider = map.map_or_else(|| json!({}), |m| json!(m));
        }
        if let Some(m) = input.input_moderation {
            row.input_moderation = m;
        }
        if let Some(key) = input.api_key {
            let record = id.to_string();
            row.api_key_encrypted = match blank(key) {
                Some(k) => Some(
                    state
                        .keys
                        .encrypt(
                            &k,
                            &Binding {
                                purpose: KEY_PURPOSE,
                                tenant,
                                record: &record,
                            },
                        )
                        .map_err(AppError::internal)?,
                ),
                None => None,
            };
        }
        let row: OverrideRow = diesel::update(ro::table.find(id))
            .set((
                ro::provider_id.eq(&row.provider_id),
                ro::model_id.eq(&row.model_id),
                ro::base_url.eq(&row.base_url),
                ro::api_key_encrypted.eq(&row.api_key_encrypted),
                ro::allowed_override_providers.eq(&row.allowed_override_providers),
                ro::allowed_override_models_by_provider
                    .eq(&row.allowed_override_models_by_provider),
                ro::input_moderation.eq(row.input_moderation),
                ro::updated_by_user_id.eq(ctx.user_id),
                ro::updated_at.eq(now),
            ))
            .returning(OverrideRow::as_select())
            .get_result(conn)
            .await?;
        let e = entry(
            ctx,
            "ai_assistant.runtime_override",
            row.id,
            "Save AI settings",
            None,
        );
        record_batch(conn, &actor, vec![("ai_assistant.settings.update", e)]).await?;
        Ok(row.into())
    })
    .await
}

/// Clears the runtime override of `agent` (or the tenant-wide one): a row
/// still holding allowed-override lists keeps them, anything else goes.
pub async fn clear(db: &Db, ctx: &AuthContext, agent: Option<String>) -> Result<bool, AppError> {
    let (tenant, org) = scope(ctx)?;
    let agent = blank(agent);
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let Some(row) = providers::override_row(conn, tenant, org, agent.as_deref()).await? else {
            return Ok(false);
        };
        let keeps = row.allowed_override_providers.is_some()
            || row
                .allowed_override_models_by_provider
                .as_object()
                .is_some_and(|m| !m.is_empty())
            || row.loop_max_steps.is_some()
            || row.loop_disabled.is_some();
        if keeps {
            diesel::update(ro::table.find(row.id))
                .set((
                    ro::provider_id.eq(None::<String>),
                    ro::model_id.eq(None::<String>),
                    ro::base_url.eq(None::<String>),
                    ro::api_key_encrypted.eq(None::<String>),
                    ro::updated_at.eq(OffsetDateTime::now_utc()),
                ))
                .execute(conn)
                .await?;
        } else {
            diesel::delete(ro::table.find(row.id)).execute(conn).await?;
        }
        let e = entry(
            ctx,
            "ai_assistant.runtime_override",
            row.id,
            "Clear AI settings",
            None,
        );
        record_batch(conn, &actor, vec![("ai_assistant.settings.delete", e)]).await?;
        Ok(true)
    })
    .await
}
