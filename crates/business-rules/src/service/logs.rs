//! The execution log: list and detail, in the caller's tenant and
//! organizations.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::list::{ListParams, ListRequest};
use uuid::Uuid;

use super::{Kept, SortValue, after, by, list_request, parse_time};
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

/// A log-list cursor's key: the sorted value, then the id (descending).
type LogKey = (SortValue, i64);

fn tag(sort: LogSort, dir: SortDir) -> &'static str {
    match (sort, dir) {
        (LogSort::Id, SortDir::Asc) => "business_rules.logs:id:asc",
        (LogSort::Id, SortDir::Desc) => "business_rules.logs:id:desc",
        (LogSort::RuleId, SortDir::Asc) => "business_rules.logs:ruleId:asc",
        (LogSort::RuleId, SortDir::Desc) => "business_rules.logs:ruleId:desc",
        (LogSort::EntityType, SortDir::Asc) => "business_rules.logs:entityType:asc",
        (LogSort::EntityType, SortDir::Desc) => "business_rules.logs:entityType:desc",
        (LogSort::ExecutionResult, SortDir::Asc) => "business_rules.logs:executionResult:asc",
        (LogSort::ExecutionResult, SortDir::Desc) => "business_rules.logs:executionResult:desc",
        (LogSort::ExecutionTimeMs, SortDir::Asc) => "business_rules.logs:executionTimeMs:asc",
        (LogSort::ExecutionTimeMs, SortDir::Desc) => "business_rules.logs:executionTimeMs:desc",
        (LogSort::ExecutedAt, SortDir::Asc) => "business_rules.logs:executedAt:asc",
        (LogSort::ExecutedAt, SortDir::Desc) => "business_rules.logs:executedAt:desc",
    }
}

fn key_of(row: &LogRow, sort: LogSort) -> LogKey {
    let value = match sort {
        LogSort::Id => SortValue::Int(row.id),
        LogSort::RuleId => SortValue::Uuid(row.rule_id),
        LogSort::EntityType => SortValue::Text(row.entity_type.clone()),
        LogSort::ExecutionResult => SortValue::Text(row.execution_result.clone()),
        LogSort::ExecutionTimeMs => SortValue::Int(i64::from(row.execution_time_ms)),
        LogSort::ExecutedAt => SortValue::time(row.executed_at),
    };
    (value, row.id)
}

/// [`filtered`] plus, in keyset mode, "after the cursor's row".
fn windowed<'a>(
    ctx: &AuthContext,
    tenant: Uuid,
    q: &'a LogListQuery,
    (sort, desc): (LogSort, bool),
    after: Option<&LogKey>,
) -> Result<Boxed<'a>, AppError> {
    let query = filtered(ctx, tenant, q)?;
    let Some((value, id)) = after else {
        return Ok(query);
    };
    let tail = l::id.lt(*id);
    Ok(match sort {
        LogSort::Id => after!(query, l::id, value.big()?, desc, tail),
        LogSort::RuleId => after!(query, l::rule_id, value.uuid()?, desc, tail),
        LogSort::EntityType => after!(query, l::entity_type, value.text()?, desc, tail),
        LogSort::ExecutionResult => after!(query, l::execution_result, value.text()?, desc, tail),
        LogSort::ExecutionTimeMs => after!(query, l::execution_time_ms, value.int()?, desc, tail),
        LogSort::ExecutedAt => after!(query, l::executed_at, value.at()?, desc, tail),
    })
}

/// `GET /business_rules/logs`: one statement for the page and its capped
/// count (a second one only for a page past the end). Default order:
/// `executedAt`, descending; ties by id, descending.
/// The read models a log-list page is computed from: the logs and the rules
/// whose names and types it shows (migration `business_rules_read_versions`).
pub const READ_DEPS: &[&str] = &["business_rules.logs", "business_rules.rules"];

pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    q: &LogListQuery,
    params: &ListParams,
) -> Result<Kept<LogList>, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let deps = ReadDeps::new(READ_DEPS, Some(tenant));
    let sort = q.sort_field.unwrap_or(LogSort::ExecutedAt);
    let dir = q.sort_dir.unwrap_or(SortDir::Desc);
    let req: ListRequest<LogKey> = list_request(q.page, q.page_size, params, tag(sort, dir))?;
    let order = (sort, dir == SortDir::Desc);
    let after = req.after.as_ref();
    let query = windowed(ctx, tenant, q, order, after)?;
    let desc = order.1;
    let query = match sort {
        LogSort::Id => by!(query, l::id, desc),
        LogSort::RuleId => by!(query, l::rule_id, desc),
        LogSort::EntityType => by!(query, l::entity_type, desc),
        LogSort::ExecutionResult => by!(query, l::execution_result, desc),
        LogSort::ExecutionTimeMs => by!(query, l::execution_time_ms, desc),
        LogSort::ExecutedAt => by!(query, l::executed_at, desc),
    };
    let counted = windowed(ctx, tenant, q, order, after)?.select(l::id);
    type Row = (LogRow, (String, String), i64, Vec<i64>);
    let rows: Vec<Row> = query
        .then_order_by(l::id.desc())
        .select((
            LogRow::as_select(),
            (r::rule_name, r::rule_type),
            req.count(counted),
            versions(deps),
        ))
        .offset(req.offset())
        .limit(req.limit())
        .load(conn)
        .await?;
    let mut count = <[_]>::first(&rows).map(|r| r.2);
    let versions = <[_]>::first(&rows).map(|r| r.3.clone());
    if req.needs_separate_count(rows.len()) {
        let again = windowed(ctx, tenant, q, order, after)?.select(l::id);
        count = Some(diesel::select(req.count(again)).get_result(conn).await?);
    }
    let rows: Vec<(LogRow, (String, String))> = rows.into_iter().map(|r| (r.0, r.1)).collect();
    let page = req.finish(rows, count, |(row, _)| key_of(row, sort));
    Ok(Kept {
        value: LogList {
            page: page.map(|(row, (rule_name, rule_type))| LogItem {
                fields: fields(&row),
                rule_id: row.rule_id,
                rule_name,
                rule_type,
            }),
        },
        deps,
        versions,
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
