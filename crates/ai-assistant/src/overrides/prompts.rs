//! The prompt override: append-only versions.

use super::*;

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

#[derive(Clone, Debug, Serialize, ToSchema, Queryable, Selectable)]
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
