//! The loop override: the seven loop columns of an agent's runtime row.

use super::*;

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
