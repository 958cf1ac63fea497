//! The rule list on `stoa_core::list`: the page, its capped count in the
//! same statement and keyset cursors for every order.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::search::escape_like;
use uuid::Uuid;

use super::rules::item;
use super::{Kept, SortValue, after, by, list_request};
use crate::dto::*;
use crate::error::RulesError;
use crate::model::RuleRow;
use crate::schema::business_rules as r;

/// A rule-list cursor's key: the sorted value, then the ties' order
/// (`ruleId`, then the id, both ascending).
type RuleKey = (SortValue, String, Uuid);

/// The cursor tag of the list in `sort`/`dir` order (a cursor of one order
/// is 400 in another).
fn tag(sort: RuleSort, dir: SortDir) -> &'static str {
    match (sort, dir) {
        (RuleSort::RuleId, SortDir::Asc) => "business_rules.rules:ruleId:asc",
        (RuleSort::RuleId, SortDir::Desc) => "business_rules.rules:ruleId:desc",
        (RuleSort::RuleName, SortDir::Asc) => "business_rules.rules:ruleName:asc",
        (RuleSort::RuleName, SortDir::Desc) => "business_rules.rules:ruleName:desc",
        (RuleSort::RuleType, SortDir::Asc) => "business_rules.rules:ruleType:asc",
        (RuleSort::RuleType, SortDir::Desc) => "business_rules.rules:ruleType:desc",
        (RuleSort::EntityType, SortDir::Asc) => "business_rules.rules:entityType:asc",
        (RuleSort::EntityType, SortDir::Desc) => "business_rules.rules:entityType:desc",
        (RuleSort::Priority, SortDir::Asc) => "business_rules.rules:priority:asc",
        (RuleSort::Priority, SortDir::Desc) => "business_rules.rules:priority:desc",
        (RuleSort::CreatedAt, SortDir::Asc) => "business_rules.rules:createdAt:asc",
        (RuleSort::CreatedAt, SortDir::Desc) => "business_rules.rules:createdAt:desc",
        (RuleSort::UpdatedAt, SortDir::Asc) => "business_rules.rules:updatedAt:asc",
        (RuleSort::UpdatedAt, SortDir::Desc) => "business_rules.rules:updatedAt:desc",
    }
}

fn key_of(row: &RuleRow, sort: RuleSort) -> RuleKey {
    let s = &row.state;
    let value = match sort {
        RuleSort::RuleId => SortValue::Text(s.rule_id.clone()),
        RuleSort::RuleName => SortValue::Text(s.rule_name.clone()),
        RuleSort::RuleType => SortValue::Text(s.rule_type.clone()),
        RuleSort::EntityType => SortValue::Text(s.entity_type.clone()),
        RuleSort::Priority => SortValue::Int(i64::from(s.priority)),
        RuleSort::CreatedAt => SortValue::time(s.created_at),
        RuleSort::UpdatedAt => SortValue::time(row.updated_at),
    };
    (value, s.rule_id.clone(), s.id)
}

type Boxed<'a> = r::BoxedQuery<'a, diesel::pg::Pg>;

fn filtered<'a>(ctx: &AuthContext, tenant: Uuid, q: &'a RuleListQuery) -> Boxed<'a> {
    let mut query = r::table
        .filter(r::tenant_id.eq(tenant))
        .filter(r::deleted_at.is_null())
        .into_boxed();
    if let Some(orgs) = &ctx.acl.visible_organization_ids {
        query = query.filter(r::organization_id.eq_any(orgs.clone()));
    }
    if let Some(id) = q.id {
        query = query.filter(r::id.eq(id));
    }
    if let Some(s) = q.search.as_deref().filter(|s| !s.trim().is_empty()) {
        query = query.filter(r::rule_name.ilike(format!("%{}%", escape_like(s.trim()))));
    }
    if let Some(s) = q.rule_id.as_deref().filter(|s| !s.trim().is_empty()) {
        query = query.filter(r::rule_id.ilike(format!("%{}%", escape_like(s.trim()))));
    }
    if let Some(t) = q.rule_type {
        query = query.filter(r::rule_type.eq(t.as_str()));
    }
    if let Some(e) = &q.entity_type {
        query = query.filter(r::entity_type.eq(e.clone()));
    }
    if let Some(e) = &q.event_type {
        query = query.filter(r::event_type.eq(e.clone()));
    }
    if let Some(e) = q.enabled {
        query = query.filter(r::enabled.eq(e));
    }
    if let Some(c) = &q.rule_category {
        query = query.filter(r::rule_category.eq(c.clone()));
    }
    query
}

/// [`filtered`] plus, in keyset mode, "after the cursor's row".
fn windowed<'a>(
    ctx: &AuthContext,
    tenant: Uuid,
    q: &'a RuleListQuery,
    (sort, desc): (RuleSort, bool),
    after: Option<&RuleKey>,
) -> Result<Boxed<'a>, AppError> {
    let query = filtered(ctx, tenant, q);
    let Some((value, rule_id, id)) = after else {
        return Ok(query);
    };
    let (rid, id) = (rule_id.clone(), *id);
    let tail = r::rule_id
        .gt(rid.clone())
        .or(r::rule_id.eq(rid).and(r::id.gt(id)));
    Ok(match sort {
        RuleSort::RuleId => after!(query, r::rule_id, value.text()?, desc, tail),
        RuleSort::RuleName => after!(query, r::rule_name, value.text()?, desc, tail),
        RuleSort::RuleType => after!(query, r::rule_type, value.text()?, desc, tail),
        RuleSort::EntityType => after!(query, r::entity_type, value.text()?, desc, tail),
        RuleSort::Priority => after!(query, r::priority, value.int()?, desc, tail),
        RuleSort::CreatedAt => after!(query, r::created_at, value.at()?, desc, tail),
        RuleSort::UpdatedAt => after!(query, r::updated_at, value.at()?, desc, tail),
    })
}

/// The read models a rule-list page is computed from (migration
/// `business_rules_read_versions`).
pub const READ_DEPS: &[&str] = &["business_rules.rules"];

/// `GET /business_rules/rules`: one statement for the page, its capped
/// count and the read versions it was computed from (a second one only for
/// a page past the end, which is then not kept). Default order: priority,
/// descending; ties by `ruleId`, then id.
pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    q: &RuleListQuery,
    params: &ListParams,
) -> Result<Kept<RuleList>, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let deps = ReadDeps::new(READ_DEPS, Some(tenant));
    let sort = q.sort_field.unwrap_or(RuleSort::Priority);
    let dir = q.sort_dir.unwrap_or(SortDir::Desc);
    let req: ListRequest<RuleKey> = list_request(q.page, q.page_size, params, tag(sort, dir))?;
    let order = (sort, dir == SortDir::Desc);
    let after = req.after.as_ref();
    let query = windowed(ctx, tenant, q, order, after)?;
    let desc = order.1;
    let query = match sort {
        RuleSort::RuleId => by!(query, r::rule_id, desc),
        RuleSort::RuleName => by!(query, r::rule_name, desc),
        RuleSort::RuleType => by!(query, r::rule_type, desc),
        RuleSort::EntityType => by!(query, r::entity_type, desc),
        RuleSort::Priority => by!(query, r::priority, desc),
        RuleSort::CreatedAt => by!(query, r::created_at, desc),
        RuleSort::UpdatedAt => by!(query, r::updated_at, desc),
    };
    let counted = windowed(ctx, tenant, q, order, after)?.select(r::id);
    let rows: Vec<(RuleRow, i64, Vec<i64>)> = query
        .then_order_by(r::rule_id.asc())
        .then_order_by(r::id.asc())
        .select((RuleRow::as_select(), req.count(counted), versions(deps)))
        .offset(req.offset())
        .limit(req.limit())
        .load(conn)
        .await?;
    let mut count = <[_]>::first(&rows).map(|r| r.1);
    let versions = <[_]>::first(&rows).map(|r| r.2.clone());
    if req.needs_separate_count(rows.len()) {
        let again = windowed(ctx, tenant, q, order, after)?.select(r::id);
        count = Some(diesel::select(req.count(again)).get_result(conn).await?);
    }
    let rows: Vec<RuleRow> = rows.into_iter().map(|r| r.0).collect();
    let page = req.finish(rows, count, |row| key_of(row, sort));
    Ok(Kept {
        value: RuleList {
            page: page.map(|row| item(row).0),
        },
        deps,
        versions,
    })
}
