//! Token usage (daily rollup, sessions, one session's steps) and the
//! moderation flags, read for the caller's tenant and the organizations it
//! sees.

use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bool, Date, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use time::Date as Day;
use uuid::Uuid;

use crate::error::AiError;

/// The caller's tenant and the organizations it is limited to (`None`: all).
fn scope(ctx: &AuthContext) -> Result<(Uuid, Option<Vec<Uuid>>), AppError> {
    Ok((
        ctx.tenant_id.ok_or(AiError::TenantRequired)?,
        ctx.acl.visible_organization_ids.clone(),
    ))
}

#[derive(QueryableByName)]
struct JsonRow {
    #[diesel(sql_type = Jsonb)]
    body: Value,
}

/// `{rows, total}` of the daily rollup between two days (inclusive).
pub async fn daily(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    from: Day,
    to: Day,
    agent: Option<&str>,
    model: Option<&str>,
) -> Result<Value, AppError> {
    let (tenant, orgs) = scope(ctx)?;
    let row: JsonRow = diesel::sql_query(
        "SELECT jsonb_build_object('rows', COALESCE(jsonb_agg(jsonb_build_object( \
           'id', id, 'tenantId', tenant_id, 'organizationId', organization_id, 'day', day, \
           'agentId', agent_id, 'modelId', model_id, 'providerId', provider_id, \
           'inputTokens', input_tokens::text, 'outputTokens', output_tokens::text, \
           'cachedInputTokens', cached_input_tokens::text, 'reasoningTokens', reasoning_tokens::text, \
           'stepCount', step_count::text, 'turnCount', turn_count::text, 'sessionCount', session_count::text, \
           'createdAt', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), 'updatedAt', to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')) ORDER BY day, agent_id, model_id), '[]'::jsonb), \
           'total', count(*)) AS body \
         FROM ai_token_usage_daily \
         WHERE tenant_id = $1 AND day BETWEEN $2 AND $3 \
           AND ($4::text IS NULL OR agent_id = $4) AND ($5::text IS NULL OR model_id = $5) \
           AND ($6 OR organization_id IS NULL OR organization_id = ANY($7))",
    )
    .bind::<SqlUuid, _>(tenant)
    .bind::<Date, _>(from)
    .bind::<Date, _>(to)
    .bind::<Nullable<Text>, _>(agent)
    .bind::<Nullable<Text>, _>(model)
    .bind::<Bool, _>(orgs.is_none())
    .bind::<Array<SqlUuid>, _>(orgs.unwrap_or_default())
    .get_result(conn)
    .await?;
    Ok(row.body)
}

/// Per-session totals, newest first, paged by `limit` and `offset`.
pub async fn sessions(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    from: Option<Day>,
    to: Option<Day>,
    agent: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<Value, AppError> {
    let (tenant, orgs) = scope(ctx)?;
    let row: JsonRow = diesel::sql_query(
        "WITH s AS ( \
           SELECT session_id, min(agent_id) AS agent_id, min(module_id) AS module_id, \
                  (array_agg(user_id))[1] AS user_id, min(created_at) AS started_at, \
                  max(created_at) AS last_event_at, count(*) AS step_count, \
                  count(DISTINCT turn_id) AS turn_count, sum(input_tokens) AS input_tokens, \
                  sum(output_tokens) AS output_tokens, \
                  COALESCE(sum(cached_input_tokens), 0) AS cached_input_tokens, \
                  COALESCE(sum(reasoning_tokens), 0) AS reasoning_tokens \
           FROM ai_token_usage_events \
           WHERE tenant_id = $1 \
             AND ($2::date IS NULL OR created_at >= $2::date) \
             AND ($3::date IS NULL OR created_at < $3::date + 1) \
             AND ($4::text IS NULL OR agent_id = $4) \
             AND ($5 OR organization_id IS NULL OR organization_id = ANY($6)) \
           GROUP BY session_id) \
         SELECT jsonb_build_object( \
           'sessions', COALESCE((SELECT jsonb_agg(jsonb_build_object( \
               'sessionId', session_id, 'agentId', agent_id, 'moduleId', module_id, 'userId', user_id, \
               'startedAt', to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), 'lastEventAt', to_char(last_event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), 'stepCount', step_count, \
               'turnCount', turn_count, 'inputTokens', input_tokens, 'outputTokens', output_tokens, \
               'cachedInputTokens', cached_input_tokens, 'reasoningTokens', reasoning_tokens) \
               ORDER BY last_event_at DESC) \
             FROM (SELECT * FROM s ORDER BY last_event_at DESC LIMIT $7 OFFSET $8) page), '[]'::jsonb), \
           'total', (SELECT count(*) FROM s), 'limit', $7, 'offset', $8) AS body",
    )
    .bind::<SqlUuid, _>(tenant)
    .bind::<Nullable<Date>, _>(from)
    .bind::<Nullable<Date>, _>(to)
    .bind::<Nullable<Text>, _>(agent)
    .bind::<Bool, _>(orgs.is_none())
    .bind::<Array<SqlUuid>, _>(orgs.unwrap_or_default())
    .bind::<BigInt, _>(limit)
    .bind::<BigInt, _>(offset)
    .get_result(conn)
    .await?;
    Ok(row.body)
}

/// Up to 200 step rows of one session; 404 `session_not_found` when none.
pub async fn session(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<Value, AppError> {
    let (tenant, orgs) = scope(ctx)?;
    let row: JsonRow = diesel::sql_query(
        "WITH e AS (SELECT * FROM ai_token_usage_events \
           WHERE tenant_id = $1 AND session_id = $2 \
             AND ($3 OR organization_id IS NULL OR organization_id = ANY($4))) \
         SELECT jsonb_build_object( \
           'events', COALESCE((SELECT jsonb_agg(jsonb_build_object( \
               'id', id, 'agentId', agent_id, 'moduleId', module_id, 'userId', user_id, \
               'turnId', turn_id, 'stepIndex', step_index, 'providerId', provider_id, 'modelId', model_id, \
               'inputTokens', input_tokens, 'outputTokens', output_tokens, \
               'cachedInputTokens', cached_input_tokens, 'reasoningTokens', reasoning_tokens, \
               'finishReason', finish_reason, 'loopAbortReason', loop_abort_reason, 'createdAt', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')) \
               ORDER BY created_at, step_index) \
             FROM (SELECT * FROM e ORDER BY created_at, step_index LIMIT 200) page), '[]'::jsonb), \
           'total', (SELECT count(*) FROM e), 'sessionId', $2) AS body",
    )
    .bind::<SqlUuid, _>(tenant)
    .bind::<SqlUuid, _>(id)
    .bind::<Bool, _>(orgs.is_none())
    .bind::<Array<SqlUuid>, _>(orgs.unwrap_or_default())
    .get_result(conn)
    .await?;
    if row.body["total"] == 0 {
        return Err(AiError::SessionNotFound.into());
    }
    Ok(row.body)
}

/// `{items, total, page, pageSize}` of the moderation flags, newest first.
#[expect(
    clippy::too_many_arguments,
    reason = "each filter of the route's query"
)]
pub async fn flags(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    page: i64,
    page_size: i64,
    agent: Option<&str>,
    user: Option<Uuid>,
    from: Option<Day>,
    to: Option<Day>,
) -> Result<Value, AppError> {
    let (tenant, orgs) = scope(ctx)?;
    let row: JsonRow = diesel::sql_query(
        "WITH f AS (SELECT * FROM ai_moderation_flags \
           WHERE tenant_id = $1 AND ($2::text IS NULL OR agent_id = $2) \
             AND ($3::uuid IS NULL OR user_id = $3) \
             AND ($4::date IS NULL OR created_at >= $4::date) \
             AND ($5::date IS NULL OR created_at < $5::date + 1) \
             AND ($6 OR organization_id IS NULL OR organization_id = ANY($7))) \
         SELECT jsonb_build_object( \
           'items', COALESCE((SELECT jsonb_agg(jsonb_build_object( \
               'id', id, 'tenantId', tenant_id, 'organizationId', organization_id, 'agentId', agent_id, \
               'userId', user_id, 'providerId', provider_id, 'modelId', model_id, \
               'categories', categories, 'createdAt', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')) ORDER BY created_at DESC) \
             FROM (SELECT * FROM f ORDER BY created_at DESC, id LIMIT $8 OFFSET $9) page), '[]'::jsonb), \
           'total', (SELECT count(*) FROM f), 'page', $10, 'pageSize', $8) AS body",
    )
    .bind::<SqlUuid, _>(tenant)
    .bind::<Nullable<Text>, _>(agent)
    .bind::<Nullable<SqlUuid>, _>(user)
    .bind::<Nullable<Date>, _>(from)
    .bind::<Nullable<Date>, _>(to)
    .bind::<Bool, _>(orgs.is_none())
    .bind::<Array<SqlUuid>, _>(orgs.unwrap_or_default())
    .bind::<BigInt, _>(page_size)
    .bind::<BigInt, _>((page - 1) * page_size)
    .bind::<BigInt, _>(page)
    .get_result(conn)
    .await?;
    Ok(row.body)
}

/// What one prune run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Per-step rows deleted (older than the retention).
    pub deleted: u64,
    /// Daily rows whose `session_count` was set from the kept steps.
    pub reconciled: u64,
    /// Whether old rows remain (the run stopped at its batch budget).
    pub more: bool,
}

/// Deletes per-step usage rows older than `retention_days`, `batch` rows
/// per statement and at most `max_batches` statements per run, after
/// setting the daily rollup's `session_count` to the distinct sessions of
/// each whole day still kept (the reference's reconciliation). Daily rows
/// are never deleted: the rollup outlives the steps.
pub async fn prune(
    conn: &mut AsyncPgConnection,
    retention_days: u32,
    batch: i64,
    max_batches: u32,
) -> Result<Pruned, AppError> {
    let cutoff = time::OffsetDateTime::now_utc() - time::Duration::days(i64::from(retention_days));
    // The first whole day after the cutoff: its steps are all still there.
    let first_whole = cutoff.date().next_day().unwrap_or(cutoff.date());
    let reconciled = diesel::sql_query(
        "UPDATE ai_token_usage_daily d SET session_count = s.sessions, updated_at = now() \
         FROM (SELECT tenant_id, organization_id, (created_at AT TIME ZONE 'UTC')::date AS day, \
                      agent_id, model_id, count(DISTINCT session_id) AS sessions \
               FROM ai_token_usage_events \
               WHERE created_at >= ($1::date)::timestamp AT TIME ZONE 'UTC' \
               GROUP BY 1, 2, 3, 4, 5) s \
         WHERE d.tenant_id = s.tenant_id AND d.organization_id IS NOT DISTINCT FROM s.organization_id \
           AND d.day = s.day AND d.agent_id = s.agent_id AND d.model_id = s.model_id \
           AND d.session_count <> s.sessions",
    )
    .bind::<Date, _>(first_whole)
    .execute(conn)
    .await?;
    let mut deleted = 0_u64;
    let mut more = false;
    for n in 0..max_batches {
        let gone = diesel::sql_query(
            "DELETE FROM ai_token_usage_events WHERE id IN \
               (SELECT id FROM ai_token_usage_events WHERE created_at < $1 LIMIT $2)",
        )
        .bind::<diesel::sql_types::Timestamptz, _>(cutoff)
        .bind::<BigInt, _>(batch)
        .execute(conn)
        .await?;
        deleted += gone as u64;
        if (gone as i64) < batch {
            break;
        }
        more = n + 1 == max_batches;
    }
    Ok(Pruned {
        deleted,
        reconciled: reconciled as u64,
        more,
    })
}
