//! The tenant's model allowlist: within the environment's, per organization.

use super::*;

/// `PUT /ai_assistant/settings/allowlist`.
#[derive(Debug, Default, Deserialize, Validate, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllowlistInput {
    /// `null`: inherit the environment's.
    pub allowed_providers: Option<Vec<String>>,
    #[serde(default)]
    pub allowed_models_by_provider: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SavedAllowlist {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    #[schema(value_type = Option<Vec<String>>)]
    pub allowed_providers: Option<Value>,
    #[schema(value_type = Object)]
    pub allowed_models_by_provider: Value,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<AllowlistRow> for SavedAllowlist {
    fn from(r: AllowlistRow) -> Self {
        Self {
            id: r.id,
            tenant_id: r.tenant_id,
            organization_id: r.organization_id,
            allowed_providers: r.allowed_providers,
            allowed_models_by_provider: r.allowed_models_by_provider,
            updated_at: r.updated_at,
        }
    }
}

/// Replaces the tenant allowlist (within the environment's: 400
/// `provider_not_in_env_allowlist` / `model_not_in_env_allowlist`).
pub async fn put_allowlist(
    db: &Db,
    state: &AiState,
    ctx: &AuthContext,
    input: AllowlistInput,
) -> Result<SavedAllowlist, AppError> {
    let (tenant, org) = scope(ctx)?;
    let cfg = &state.config;
    let providers_list: Option<Vec<String>> = input
        .allowed_providers
        .map(|l| l.iter().map(|p| config::normalize(p)).collect());
    for p in providers_list.iter().flatten() {
        if config::provider(p).is_none() {
            return Err(AiError::ProviderUnknown.into());
        }
        if !cfg.env_allows_provider(p) {
            return Err(AiError::ProviderNotInEnvAllowlist.into());
        }
    }
    let mut models = serde_json::Map::new();
    for (p, list) in input.allowed_models_by_provider {
        let p = config::normalize(&p);
        if config::provider(&p).is_none() {
            return Err(AiError::ProviderUnknown.into());
        }
        if !cfg.env_allows_provider(&p) {
            return Err(AiError::ProviderNotInEnvAllowlist.into());
        }
        if list.iter().any(|m| !cfg.env_allows_model(&p, m)) {
            return Err(AiError::ModelNotInEnvAllowlist.into());
        }
        models.insert(p, json!(list));
    }
    let providers_json = providers_list.map(|l| json!(l));
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let now = OffsetDateTime::now_utc();
        let row: AllowlistRow = match providers::allowlist_row(conn, tenant, org).await? {
            Some(existing) => {
                diesel::update(al::table.find(existing.id))
                    .set((
                        al::allowed_providers.eq(&providers_json),
                        al::allowed_models_by_provider.eq(Value::Object(models.clone())),
                        al::updated_by_user_id.eq(ctx.user_id),
                        al::updated_at.eq(now),
                    ))
                    .returning(AllowlistRow::as_select())
                    .get_result(conn)
                    .await?
            }
            None => {
                diesel::insert_into(al::table)
                    .values((
                        al::id.eq(Uuid::new_v4()),
                        al::tenant_id.eq(tenant),
                        al::organization_id.eq(org),
                        al::allowed_providers.eq(&providers_json),
                        al::allowed_models_by_provider.eq(Value::Object(models.clone())),
                        al::updated_by_user_id.eq(ctx.user_id),
                    ))
                    .returning(AllowlistRow::as_select())
                    .get_result(conn)
                    .await?
            }
        };
        let e = entry(
            ctx,
            "ai_assistant.allowlist",
            row.id,
            "Save AI model allowlist",
            None,
        );
        record_batch(conn, &actor, vec![("ai_assistant.allowlist.update", e)]).await?;
        Ok(row.into())
    })
    .await
}

pub async fn clear_allowlist(db: &Db, ctx: &AuthContext) -> Result<bool, AppError> {
    let (tenant, org) = scope(ctx)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let Some(row) = providers::allowlist_row(conn, tenant, org).await? else {
            return Ok(false);
        };
        diesel::delete(al::table.find(row.id)).execute(conn).await?;
        let e = entry(
            ctx,
            "ai_assistant.allowlist",
            row.id,
            "Clear AI model allowlist",
            None,
        );
        record_batch(conn, &actor, vec![("ai_assistant.allowlist.delete", e)]).await?;
        Ok(true)
    })
    .await
}
