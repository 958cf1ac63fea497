//! The execution log: list and detail, in the caller's tenant and
//! organizations.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use uuid::Uuid;

use super::{page_of, parse_time, total_pages};
use crate::condition::Problem;
use crate::dto::*;
use crate::error::{RulesError, invalid};
use crate::model::LogRow;
use crate::schema::{business_rule_logs as l, business_rules as r};

fn fields(row: &LogRow) -> LogFields {
    LogFields {
        id: row.id.to_string(),
        entity_id: row.entity_id.clone(),
        entity_type: row.entity_type.clone(),
        execution_result: row.execution_result.clone(),
        input_context: row.input_context.clone(),
        output_context: row.output_context.clone(),
        error_message: row.error_message.clone(),
        execution_time_ms: row.execution_time_ms,
        executed_at: row.executed_at,
        tenant_id: row.tenant_id,
        organization_id: row.organization_id,
        executed_by: row.executed_by.clone(),
    }
}

type Boxed<'a> =
    diesel::dsl::IntoBoxed<'a, diesel::dsl::InnerJoin<l::table, r::table>, diesel::pg::Pg>;

fn filtered<'a>(
    ctx: &AuthContext,
    tenant: Uuid,
    q: &'a LogListQuery,
) -> Result<Boxed<'a>, AppError> {
    let mut query = l::table
        .inner_join(r::table)
        .filter(l::tenant_id.eq(tenant))
        .into_boxed();
    if let Some(orgs) = &ctx.acl.visible_organization_ids {
        query = query.filter(l::organization_id.eq_any(orgs.clone()));
    }
    if let Some(id) = q.id {
        query = query.filter(l::id.eq(id));
    }
    if let Some(id) = q.rule_id {
        query = query.filter(l::rule_id.eq(id));
    }
    if let Some(e) = &q.entity_id {
        query = query.filter(l::entity_id.eq(e.clone()));
    }
    if let Some(e) = &q.entity_type {
        query = query.filter(l::entity_type.eq(e.clone()));
    }
    if let Some(e) = q.execution_result {
        let name = match e {
            ExecutionResult::Success => "SUCCESS",
            ExecutionResult::Failure => "FAILURE",
            ExecutionResult::Error => "ERROR",
        };
        query = query.filter(l::execution_result.eq(name));
    }
    if let Some(e) = &q.executed_by {
        query = query.filter(l::executed_by.eq(e.clone()));
    }
    let bad = |p: &str| {
        invalid(
            "",
            vec![Problem::new(vec![p.into()], "must be a date or date-time")],
        )
    };
    if let Some(from) = q.executed_at_from.as_deref() {
        let t = parse_time(from.trim()).ok_or_else(|| bad("executedAtFrom"))?;
        query = query.filter(l::executed_at.ge(t));
    }
    if let Some(to) = q.executed_at_to.as_deref() {
        let to = to.trim();
        let t = parse_time(to).ok_or_else(|| bad("executedAtTo"))?;
        // A bare date includes its whole day.
        let t = if to.len() == 10 {
            t + time::Duration::days(1) - time::Duration::microseconds(1)
        } else {
            t
        };
        query = query.filter(l::executed_at.le(t));
    }
    Ok(query)
}

pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    q: &LogListQuery,
) -> Result<LogList, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let (page, page_size) = page_of(q.page, q.page_size);
    let total: i64 = filtered(ctx, tenant, q)?.count().get_result(conn).await?;
    let desc = q.sort_dir.unwrap_or(SortDir::Desc) == SortDir::Desc;
    let mut query = filtered(ctx, tenant, q)?;
    macro_rules! by {
        ($col:expr) => {
            if desc {
                query.order($col.desc())
            } else {
                query.order($col.asc())
            }
        };
    }
    query = match q.sort_field.unwrap_or(LogSort::ExecutedAt) {
        LogSort::Id => by!(l::id),
        LogSort::RuleId => by!(l::rule_id),
        LogSort::EntityType => by!(l::entity_type),
        LogSort::ExecutionResult => by!(l::execution_result),
        LogSort::ExecutionTimeMs => by!(l::execution_time_ms),
        LogSort::ExecutedAt => by!(l::executed_at),
    };
    let rows: Vec<(LogRow, (String, String))> = query
        .then_order_by(l::id.desc())
        .limit(page_size)
        .offset((page - 1) * page_size)
        .select((LogRow::as_select(), (r::rule_name, r::rule_type)))
        .load(conn)
        .await?;
    Ok(LogList {
        items: rows
            .into_iter()
            .map(|(row, (rule_name, rule_type))| LogItem {
                fields: fields(&row),
                rule_id: row.rule_id,
                rule_name,
                rule_type,
            })
            .collect(),
        total,
        page,
        page_size,
        total_pages: total_pages(total, page_size),
    })
}

/// The rule's id, string key, name, type and entity type.
type RuleColumns = (Uuid, String, String, String, String);

pub async fn get(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: i64,
) -> Result<LogDetail, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let found: Option<(LogRow, RuleColumns)> = l::table
        .inner_join(r::table)
        .filter(l::id.eq(id))
        .filter(l::tenant_id.eq(tenant))
        .select((
            LogRow::as_select(),
            (
                r::id,
                r::rule_id,
                r::rule_name,
                r::rule_type,
                r::entity_type,
            ),
        ))
        .first(conn)
        .await
        .optional()?;
    let (row, (rid, rule_id, rule_name, rule_type, entity_type)) = found
        .filter(|(row, _)| {
            row.organization_id
                .is_none_or(|o| ctx.can_see_organization(o))
        })
        .ok_or(RulesError::LogNotFound)?;
    Ok(LogDetail {
        fields: fields(&row),
        rule: LogRule {
            id: rid,
            rule_id,
            rule_name,
            rule_type,
            entity_type,
        },
    })
}
