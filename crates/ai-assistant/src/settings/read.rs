//! `GET /ai_assistant/settings`: what applies, and the effective allowlist.

use super::*;

/// `GET /ai_assistant/settings`.
pub async fn read(db: &Db, state: &AiState, ctx: &AuthContext) -> Result<Value, AppError> {
    let cfg = &state.config;
    let mut conn = db.conn().await?;
    let (tenant_row, allow_row) = match ctx.tenant_id {
        Some(t) => (
            providers::override_row(&mut conn, t, ctx.organization_id(), None).await?,
            providers::allowlist_row(&mut conn, t, ctx.organization_id()).await?,
        ),
        None => (None, None),
    };
    let allowlist = providers::Allowlist {
        tenant: allow_row.clone(),
    };
    let first = <[_]>::first(&cfg.providers);
    let env_models: serde_json::Map<String, Value> = cfg
        .env_models
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let mut agents_out = Vec::new();
    for agent in state.agents.iter().copied() {
        let resolved = providers::resolve(
            &mut conn,
            state,
            ctx,
            agent,
            &providers::Requested::default(),
        )
        .await
        .ok();
        agents_out.push(json!({
            "agentId": agent.id,
            "moduleId": agent.module_id,
            "allowRuntimeOverride": agent.allow_runtime_override,
            "providerId": resolved.as_ref().map(|r| r.provider.id),
            "modelId": resolved.as_ref().map(|r| r.model.clone()),
            "baseURL": resolved.as_ref().map(|r| r.base_url.clone()),
            "source": resolved.as_ref().map(|r| r.source),
        }));
    }
    let resolved_default = match ctx.tenant_id {
        Some(_) => providers::resolve_scoped(
            &mut conn,
            state,
            ctx,
            None,
            true,
            &providers::Requested::default(),
        )
        .await
        .ok(),
        None => None,
    };
    let effective = effective_allowlist(cfg, allow_row.as_ref());
    Ok(json!({
        "effectiveAllowlist": effective,
        "resolvedDefault": resolved_default.map(|r| json!({
            "providerId": r.provider.id,
            "modelId": r.model,
            "baseURL": r.base_url,
            "source": r.source,
        })),
        "provider": first.map(|p| json!({
            "id": p.def.id,
            "name": p.def.name,
            "model": format!("{}/{}", p.def.id, p.def.default_model),
            "defaultModel": p.def.default_model,
            "envKey": p.def.key_vars.first(),
            "configured": true,
        })),
        "availableProviders": cfg.providers.iter()
            .filter(|p| allowlist.allows_provider(cfg, p.def.id))
            .map(|p| p.def.id).collect::<Vec<_>>(),
        "allowlistProviders": cfg.providers.iter()
            .filter(|p| cfg.env_allows_provider(p.def.id))
            .map(|p| p.def.id).collect::<Vec<_>>(),
        "allowlist": {
            "providers": cfg.env_providers,
            "modelsByProvider": env_models,
            "hasRestrictions": cfg.env_providers.is_some() || !cfg.env_models.is_empty(),
        },
        "tenantAllowlist": allow_row.map(SavedAllowlist::from),
        "mcpKeyConfigured": false,
        "tenantOverride": tenant_row.map(SavedSettings::from),
        "agents": agents_out,
    }))
}

/// The environment's allowlist narrowed by the tenant's (the reference's
/// `effectiveAllowlist`): `providers` is `null` when neither restricts
/// them, else the providers both allow; `modelsByProvider` lists, per
/// provider either restricts, the models both allow (a side that does not
/// name the provider inherits the other's list).
pub fn effective_allowlist(cfg: &config::AiConfig, tenant: Option<&AllowlistRow>) -> Value {
    let list = |v: &Value| -> Option<Vec<String>> {
        v.as_array().map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
    };
    let tenant_providers: Option<Vec<String>> = tenant
        .and_then(|t| t.allowed_providers.as_ref())
        .and_then(list)
        .map(|l| l.iter().map(|p| config::normalize(p)).collect());
    let providers: Option<Vec<String>> = match (&cfg.env_providers, &tenant_providers) {
        (None, None) => None,
        (Some(env), None) => Some(env.clone()),
        (None, Some(t)) => Some(t.clone()),
        (Some(env), Some(t)) => Some(env.iter().filter(|p| t.contains(p)).cloned().collect()),
    };
    let tenant_models: BTreeMap<String, Vec<String>> = tenant
        .and_then(|t| t.allowed_models_by_provider.as_object())
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| list(v).map(|l| (config::normalize(k), l)))
                .collect()
        })
        .unwrap_or_default();
    let mut models: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for provider in cfg.env_models.keys().chain(tenant_models.keys()) {
        if models.contains_key(provider) {
            continue;
        }
        let allowed = match (cfg.env_models.get(provider), tenant_models.get(provider)) {
            (Some(env), Some(t)) => env.iter().filter(|m| t.contains(m)).cloned().collect(),
            (Some(only), None) | (None, Some(only)) => only.clone(),
            (None, None) => continue,
        };
        models.insert(provider.clone(), allowed);
    }
    let tenant_active = tenant_providers.is_some() || !tenant_models.is_empty();
    json!({
        "providers": providers,
        "hasRestrictions": providers.is_some() || !models.is_empty(),
        "modelsByProvider": models,
        "tenantOverridesActive": tenant_active,
    })
}
