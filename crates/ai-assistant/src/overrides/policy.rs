//! The mutation-policy override: never above the code's.

use super::*;

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
