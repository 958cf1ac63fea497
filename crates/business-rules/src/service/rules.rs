//! Rules: create, update (partial), delete (soft), read, list.

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use stoa_acl::resource::{self as kit, Write};
use stoa_acl::{AuthContext, Services};
use stoa_core::AppError;
use stoa_core::command::{Operation, execute};
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use time::OffsetDateTime;
use uuid::Uuid;

use super::checks::calls_webhook;
use super::{parse_time, target_organization};
use crate::commands as cmd;
use crate::condition::Problem;
use crate::dto::*;
use crate::error::{RulesError, invalid};
use crate::model::{RuleRow, RuleState};
use crate::schema::business_rules as r;
use crate::{cache, secrets};

fn window(value: Option<&str>, path: &str) -> Result<Option<OffsetDateTime>, AppError> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(s) => parse_time(s).map(Some).ok_or_else(|| {
            invalid(
                "",
                vec![Problem::new(
                    vec![path.into()],
                    "must be a date (YYYY-MM-DD) or an RFC 3339 date-time",
                )],
            )
        }),
    }
}

/// Creates a rule; answers its id, its webhook secret (made when its
/// actions call webhooks: shown this once) and the operation.
pub async fn create(
    services: &Services,
    ctx: &AuthContext,
    body: CreateRule,
) -> Result<(Uuid, Option<String>, Operation), AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let organization = target_organization(ctx)?;
    let state = RuleState {
        id: Uuid::new_v4(),
        tenant_id: tenant,
        organization_id: organization,
        rule_id: body.rule_id.trim().to_string(),
        rule_name: body.rule_name.trim().to_string(),
        description: body.description,
        rule_type: body.rule_type.as_str().to_string(),
        rule_category: body.rule_category,
        entity_type: body.entity_type.trim().to_string(),
        event_type: body.event_type.filter(|e| !e.trim().is_empty()),
        condition_expression: body.condition_expression.filter(|v| !v.is_null()),
        success_actions: body.success_actions.filter(|v| !v.is_null()),
        failure_actions: body.failure_actions.filter(|v| !v.is_null()),
        enabled: body.enabled.unwrap_or(true),
        priority: body.priority.unwrap_or(100),
        version: body.version.unwrap_or(1),
        effective_from: window(body.effective_from.as_deref(), "effectiveFrom")?,
        effective_to: window(body.effective_to.as_deref(), "effectiveTo")?,
        created_by: ctx.actor_id(),
        updated_by: ctx.actor_id(),
        created_at: OffsetDateTime::now_utc(),
        deleted_at: None,
    };
    let id = state.id;
    let secret = calls_webhook(&state)
        .then(|| secrets::generate(&services.keys, tenant, id))
        .transpose()?;
    let mut conn = services.db.conn().await?;
    let op = conn
        .transaction(async |conn| {
            let how = Write::new(cmd::RULE_CREATE, "Create business rule");
            let (_, op) = kit::create_in(conn, ctx, Some(services), how, state).await?;
            if let Some((_, stored)) = &secret {
                secrets::store(conn, tenant, id, stored).await?;
            }
            Ok::<_, AppError>(op)
        })
        .await?;
    cache::invalidate(tenant);
    Ok((id, secret.map(|(shown, _)| shown), op))
}

/// The live rule `id`, locked for a write by `ctx` (the kit's
/// `locked_in`); a deleted one is 404 as an unknown one.
async fn live(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<RuleState, AppError> {
    ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let rule = kit::locked_in::<RuleState>(conn, ctx, id, None).await?;
    match rule.deleted_at {
        None => Ok(rule),
        Some(_) => Err(RulesError::RuleNotFound.into()),
    }
}

/// `rule` with the fields `body` sends.
fn changed(mut rule: RuleState, body: UpdateRule) -> Result<RuleState, AppError> {
    if let Some(v) = body.rule_id {
        rule.rule_id = v.trim().to_string();
    }
    if let Some(v) = body.rule_name {
        rule.rule_name = v.trim().to_string();
    }
    if let Some(v) = body.rule_type {
        rule.rule_type = v.as_str().to_string();
    }
    if let Some(v) = body.entity_type {
        rule.entity_type = v.trim().to_string();
    }
    if let Some(v) = body.description {
        rule.description = v;
    }
    if let Some(v) = body.rule_category {
        rule.rule_category = v;
    }
    if let Some(v) = body.event_type {
        rule.event_type = v.filter(|e| !e.trim().is_empty());
    }
    if let Some(v) = body.enabled {
        rule.enabled = v;
    }
    if let Some(v) = body.priority {
        rule.priority = v;
    }
    if let Some(v) = body.version {
        rule.version = v;
    }
    if let Some(v) = body.effective_from {
        rule.effective_from = window(v.as_deref(), "effectiveFrom")?;
    }
    if let Some(v) = body.effective_to {
        rule.effective_to = window(v.as_deref(), "effectiveTo")?;
    }
    if let Some(v) = body.condition_expression {
        rule.condition_expression = v.filter(|v| !v.is_null());
    }
    if let Some(v) = body.success_actions {
        rule.success_actions = v.filter(|v| !v.is_null());
    }
    if let Some(v) = body.failure_actions {
        rule.failure_actions = v.filter(|v| !v.is_null());
    }
    Ok(rule)
}

/// Changes the fields sent; answers the rule's new webhook secret when this
/// change gave a rule without one its first `CALL_WEBHOOK` action (shown
/// this once), and the operation.
pub async fn update(
    services: &Services,
    ctx: &AuthContext,
    id: Uuid,
    body: UpdateRule,
) -> Result<(Option<String>, Operation), AppError> {
    let mut conn = services.db.conn().await?;
    let (tenant, secret, op) = conn
        .transaction(async |conn| {
            let before = live(conn, ctx, id).await?;
            let mut after = changed(before.clone(), body)?;
            after.updated_by = ctx.actor_id();
            let tenant = after.tenant_id;
            let secret = if calls_webhook(&after) && !secrets::has_secret(conn, tenant, id).await? {
                Some(secrets::generate(&services.keys, tenant, id)?)
            } else {
                None
            };
            let how = Write::new(cmd::RULE_UPDATE, "Update business rule");
            let (_, op) =
                kit::save_in(conn, ctx, Some(services), how, Some(before), Some(after)).await?;
            if let Some((_, stored)) = &secret {
                secrets::store(conn, tenant, id, stored).await?;
            }
            Ok::<_, AppError>((tenant, secret.map(|(shown, _)| shown), op))
        })
        .await?;
    cache::invalidate(tenant);
    Ok((secret, op))
}

/// Gives rule `id` a new webhook secret (the old one stops signing at
/// once); answers it (shown this once) and the operation. The action log
/// records the rotation, without the secret and not undoable: undo would
/// bring back a secret that may have leaked.
pub async fn rotate_secret(
    db: &Db,
    ctx: &AuthContext,
    keys: &KeyRing,
    id: Uuid,
) -> Result<(String, Operation), AppError> {
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    let (tenant, secret, op) = conn
        .transaction(async |conn| {
            let rule = live(conn, ctx, id).await?;
            let (shown, stored) = secrets::generate(keys, rule.tenant_id, id)?;
            let command = cmd::RotateSecret {
                tenant_id: rule.tenant_id,
                organization_id: rule.organization_id,
                id,
                stored,
            };
            let (_, op) = execute(conn, &actor, command).await?;
            Ok::<_, AppError>((rule.tenant_id, shown, op))
        })
        .await?;
    cache::invalidate(tenant);
    Ok((secret, op))
}

/// Deletes rule `id` softly (its row keeps `deletedAt`; undo revives it).
pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> Result<Operation, AppError> {
    let mut conn = db.conn().await?;
    let (tenant, op) = conn
        .transaction(async |conn| {
            let before = live(conn, ctx, id).await?;
            let mut after = before.clone();
            after.deleted_at = Some(OffsetDateTime::now_utc());
            after.updated_by = ctx.actor_id();
            let tenant = after.tenant_id;
            let how = Write::new(cmd::RULE_DELETE, "Delete business rule");
            let (_, op) = kit::save_in(conn, ctx, None, how, Some(before), Some(after)).await?;
            Ok::<_, AppError>((tenant, op))
        })
        .await?;
    cache::invalidate(tenant);
    Ok(op)
}

pub(super) fn item(row: RuleRow) -> (RuleItem, RuleState) {
    let s = row.state;
    (
        RuleItem {
            id: s.id,
            rule_id: s.rule_id.clone(),
            rule_name: s.rule_name.clone(),
            description: s.description.clone(),
            rule_type: s.rule_type.clone(),
            rule_category: s.rule_category.clone(),
            entity_type: s.entity_type.clone(),
            event_type: s.event_type.clone(),
            enabled: s.enabled,
            priority: s.priority,
            version: s.version,
            effective_from: s.effective_from,
            effective_to: s.effective_to,
            tenant_id: s.tenant_id,
            organization_id: s.organization_id,
            created_at: s.created_at,
            updated_at: row.updated_at,
        },
        s,
    )
}

/// The live rule `id` as its detail (404 outside the caller's scope).
pub async fn get(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<RuleDetail, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let row = r::table
        .find(id)
        .filter(r::tenant_id.eq(tenant))
        .filter(r::deleted_at.is_null())
        .select(RuleRow::as_select())
        .first(conn)
        .await
        .optional()?
        .filter(|row| ctx.can_see_organization(row.state.organization_id))
        .ok_or(RulesError::RuleNotFound)?;
    let (item, s) = item(row);
    Ok(RuleDetail {
        item,
        condition_expression: s.condition_expression,
        success_actions: s.success_actions,
        failure_actions: s.failure_actions,
        created_by: s.created_by,
        updated_by: s.updated_by,
    })
}
