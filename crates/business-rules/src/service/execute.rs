//! `POST /business_rules/execute` (discovery) and `/execute/{ruleId}` (one
//! rule). A dry run evaluates and describes the actions but writes nothing:
//! no log, no job, no event, no mail.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::{Value, json};
use stoa_acl::{AuthContext, Services};
use stoa_core::AppError;
use time::OffsetDateTime;
use uuid::Uuid;

use super::target_organization;
use crate::EXECUTE;
use crate::authors::{self, Authorized};
use crate::dto::*;
use crate::engine::{self, CompiledRule, Request, RuleOutcome, Run};
use crate::model::RuleState;
use crate::schema::business_rules as r;
use crate::{cache, error::RulesError};

fn scope(ctx: &AuthContext) -> Result<(Uuid, Uuid), AppError> {
    let invalid = |m: &str| AppError::bad_request(format!("Invalid execution context: {m}"));
    let tenant = ctx.tenant().map_err(|_| invalid("tenantId is required"))?;
    let org = target_organization(ctx).map_err(|e| {
        if e.status().as_u16() == 403 {
            e
        } else {
            invalid("organizationId is required")
        }
    })?;
    Ok((tenant, org))
}

fn user_of(ctx: &AuthContext) -> Value {
    json!({
        "id": ctx.actor_id(),
        "email": ctx.email,
        "role": <[String]>::first(&ctx.acl.roles),
    })
}

fn executed(o: RuleOutcome) -> ExecutedRule {
    ExecutedRule {
        rule_id: o.rule.rule_id.clone(),
        rule_name: o.rule.rule_name.clone(),
        rule_type: o.rule.rule_type.clone(),
        condition_result: o.condition_result,
        actions_executed: o.actions,
        execution_time: o.execution_time_ms,
        error: o.error,
        log_id: o.log_id.map(|i| i.to_string()),
    }
}

pub async fn execute(
    services: &Services,
    ctx: &AuthContext,
    body: ExecuteBody,
) -> Result<ExecuteResult, AppError> {
    let db = &services.db;
    ctx.require(EXECUTE)?;
    let (tenant, organization) = scope(ctx)?;
    let req = Request {
        tenant_id: tenant,
        organization_id: organization,
        entity_type: body.entity_type.trim().to_string(),
        entity_id: body.entity_id,
        event_type: body.event_type.filter(|e| !e.trim().is_empty()),
        data: body.data.unwrap_or_else(|| json!({})),
        user: user_of(ctx),
        executed_by: ctx.actor_id().map(|u| u.to_string()),
        dry_run: body.dry_run.unwrap_or(false),
        writes_fields: false,
    };
    // The tenant's rules as read within the cache's refresh period (a dry
    // run of cached rules takes no connection at all).
    let mut conn = None;
    let rules = match cache::recent(tenant) {
        Some(rules) => rules,
        None => {
            let fresh = conn.insert(db.conn().await?);
            cache::rules(fresh, tenant, false).await?
        }
    };
    let now = OffsetDateTime::now_utc();
    let applicable = engine::discover(
        &rules,
        organization,
        &req.entity_type,
        req.event_type.as_deref(),
        false,
        now,
    );
    if req.dry_run {
        // Nothing acts: no author needs asking.
        return Ok(result(engine::run(&applicable, &req, now), true));
    }
    let mut conn = match conn {
        Some(conn) => conn,
        None => db.conn().await?,
    };
    let run = acting_run(services, &mut conn, applicable, &req, now).await?;
    let mut run = run;
    engine::commit(&mut conn, &req, &mut run, true).await?;
    Ok(result(run, false))
}

/// A run with effects: only rules whose authors may still have them act run
/// (`crate::authors`), the others answer why not.
async fn acting_run(
    services: &Services,
    conn: &mut AsyncPgConnection,
    rules: Vec<Arc<CompiledRule>>,
    req: &Request,
    now: OffsetDateTime,
) -> Result<Run, AppError> {
    let Authorized {
        acting, stopped, ..
    } = authors::authorize(
        conn,
        services.creators.as_ref(),
        &services.registry,
        rules,
        req,
    )
    .await?;
    let mut run = engine::run(&acting, req, now);
    run.outcomes.extend(
        stopped
            .into_iter()
            .map(|(rule, reason)| engine::not_run(rule, reason)),
    );
    Ok(run)
}

fn result(run: Run, dry_run: bool) -> ExecuteResult {
    let log_ids: Vec<String> = run
        .outcomes
        .iter()
        .filter_map(|o| o.log_id.map(|i| i.to_string()))
        .collect();
    ExecuteResult {
        allowed: run.allowed,
        total_execution_time: run.total_ms,
        executed_rules: run.outcomes.into_iter().map(executed).collect(),
        errors: (!run.errors.is_empty()).then_some(run.errors),
        log_ids: (!log_ids.is_empty()).then_some(log_ids),
        dry_run,
    }
}

/// One rule by its uuid: `(found, result)` (`found == false`: 404).
pub async fn execute_one(
    services: &Services,
    ctx: &AuthContext,
    id: Uuid,
    body: ExecuteOneBody,
) -> Result<(bool, ExecuteOneResult), AppError> {
    let db = &services.db;
    ctx.require(EXECUTE)?;
    let (tenant, organization) = scope(ctx)?;
    let mut conn = db.conn().await?;
    let state: Option<RuleState> = r::table
        .find(id)
        .filter(r::tenant_id.eq(tenant))
        .filter(r::organization_id.eq(organization))
        .filter(r::deleted_at.is_null())
        .select(RuleState::as_select())
        .first(&mut conn)
        .await
        .optional()?;
    let Some(state) = state else {
        return Ok((
            false,
            ExecuteOneResult {
                success: false,
                rule_id: id.to_string(),
                rule_name: "Unknown".into(),
                condition_result: false,
                actions_executed: None,
                execution_time: 0.0,
                error: Some(RulesError::RuleNotFound.to_string()),
                log_id: None,
            },
        ));
    };
    let rule = Arc::new(CompiledRule::compile(&state));
    let now = OffsetDateTime::now_utc();
    let fail = |error: String| ExecuteOneResult {
        success: false,
        rule_id: rule.rule_id.clone(),
        rule_name: rule.rule_name.clone(),
        condition_result: false,
        actions_executed: None,
        execution_time: 0.0,
        error: Some(error),
        log_id: None,
    };
    if let Some(why) = rule.unavailable(now) {
        return Ok((true, fail(why)));
    }
    let req = Request {
        tenant_id: tenant,
        organization_id: organization,
        entity_type: body
            .entity_type
            .unwrap_or_else(|| state.entity_type.clone()),
        entity_id: body.entity_id,
        event_type: body.event_type.or_else(|| state.event_type.clone()),
        data: body.data.unwrap_or_else(|| json!({})),
        user: user_of(ctx),
        executed_by: ctx.actor_id().map(|u| u.to_string()),
        dry_run: body.dry_run.unwrap_or(false),
        writes_fields: false,
    };
    let mut run = if req.dry_run {
        engine::run(std::slice::from_ref(&rule), &req, now)
    } else {
        acting_run(services, &mut conn, vec![rule.clone()], &req, now).await?
    };
    engine::commit(&mut conn, &req, &mut run, false).await?;
    let Some(o) = <[RuleOutcome]>::first(&run.outcomes) else {
        return Ok((true, fail(run.errors.join("; "))));
    };
    Ok((
        true,
        ExecuteOneResult {
            success: o.error.is_none(),
            rule_id: o.rule.rule_id.clone(),
            rule_name: o.rule.rule_name.clone(),
            condition_result: o.condition_result,
            actions_executed: o.actions.clone(),
            execution_time: o.execution_time_ms,
            error: o.error.clone(),
            log_id: o.log_id.map(|i| i.to_string()),
        },
    ))
}
