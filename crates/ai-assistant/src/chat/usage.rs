//! Recording a step's token usage (the event and the daily rollup).

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::agents::AgentDef;
use crate::schema::{ai_token_usage_daily as ud, ai_token_usage_events as ue};

/// One step's usage.
pub(crate) struct UsageStep<'a> {
    pub session_id: Uuid,
    pub turn_id: Uuid,
    pub step_index: u32,
    pub provider_id: &'a str,
    pub model: &'a str,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub finish_reason: Option<&'a str>,
    /// Why the loop stopped after this step, when a limit stopped it.
    pub abort: Option<&'a str>,
}

/// One usage row per step and the daily rollup (failures are logged, never
/// fail the turn).
pub(crate) async fn record_usage(
    db: &Db,
    ctx: &AuthContext,
    agent: &AgentDef,
    step: UsageStep<'_>,
) {
    let Some(tenant) = ctx.tenant_id else {
        return;
    };
    let org = ctx.organization_id();
    let result: Result<(), diesel::result::Error> = async {
        let mut conn = db
            .conn()
            .await
            .map_err(|e| diesel::result::Error::QueryBuilderError(e.to_string().into()))?;
        let input = i64::try_from(step.input_tokens).unwrap_or(i64::MAX);
        let output = i64::try_from(step.output_tokens).unwrap_or(i64::MAX);
        let first = i64::from(step.step_index == 0);
        diesel::insert_into(ue::table)
            .values((
                ue::id.eq(Uuid::new_v4()),
                ue::tenant_id.eq(tenant),
                ue::organization_id.eq(org),
                ue::user_id.eq(ctx.user_id),
                ue::agent_id.eq(agent.id),
                ue::module_id.eq(agent.module_id),
                ue::session_id.eq(step.session_id),
                ue::turn_id.eq(step.turn_id),
                ue::step_index.eq(i32::try_from(step.step_index).unwrap_or(i32::MAX)),
                ue::provider_id.eq(step.provider_id),
                ue::model_id.eq(step.model),
                ue::input_tokens.eq(input),
                ue::output_tokens.eq(output),
                ue::finish_reason.eq(step.finish_reason),
                ue::loop_abort_reason.eq(step.abort),
            ))
            .execute(&mut *conn)
            .await?;
        let day = OffsetDateTime::now_utc().date();
        diesel::insert_into(ud::table)
            .values((
                ud::id.eq(Uuid::new_v4()),
                ud::tenant_id.eq(tenant),
                ud::organization_id.eq(org),
                ud::day.eq(day),
                ud::agent_id.eq(agent.id),
                ud::model_id.eq(step.model),
                ud::provider_id.eq(step.provider_id),
                ud::input_tokens.eq(input),
                ud::output_tokens.eq(output),
                ud::step_count.eq(1_i64),
                ud::turn_count.eq(first),
                ud::session_count.eq(0_i64),
            ))
            .on_conflict((
                ud::tenant_id,
                ud::day,
                ud::agent_id,
                ud::model_id,
                ud::organization_id,
            ))
            .do_update()
            .set((
                ud::input_tokens.eq(ud::input_tokens + input),
                ud::output_tokens.eq(ud::output_tokens + output),
                ud::step_count.eq(ud::step_count + 1_i64),
                ud::turn_count.eq(ud::turn_count + first),
                ud::updated_at.eq(OffsetDateTime::now_utc()),
            ))
            .execute(&mut *conn)
            .await?;
        Ok(())
    }
    .await;
    if let Err(err) = result {
        tracing::warn!(agent.id = agent.id, error = %err, "ai usage row not written");
    }
}
