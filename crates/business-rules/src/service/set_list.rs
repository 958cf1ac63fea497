//! The rule-set list on `stoa_core::list`: the page, its capped count in
//! the same statement and keyset cursors for every order.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::search::escape_like;
use uuid::Uuid;

use super::sets::item;
use super::{Kept, SortValue, after, by, list_request};
use crate::dto::*;
use crate::error::RulesError;
use crate::model::SetRow;
use crate::schema::business_rule_sets as s;

/// A set-list cursor's key: the sorted value, then the id (ascending).
type SetKey = (SortValue, Uuid);

fn tag(sort: SetSort, dir: SortDir) -> &'static str {
    match (sort, dir) {
        (SetSort::SetId, SortDir::Asc) => "business_rules.sets:setId:asc",
        (SetSort::SetId, SortDir::Desc) => "business_rules.sets:setId:desc",
        (SetSort::SetName, SortDir::Asc) => "business_rules.sets:setName:asc",
        (SetSort::SetName, SortDir::Desc) => "business_rules.sets:setName:desc",
        (SetSort::Enabled, SortDir::Asc) => "business_rules.sets:enabled:asc",
        (SetSort::Enabled, SortDir::Desc) => "business_rules.sets:enabled:desc",
        (SetSort::CreatedAt, SortDir::Asc) => "business_rules.sets:createdAt:asc",
        (SetSort::CreatedAt, SortDir::Desc) => "business_rules.sets:createdAt:desc",
        (SetSort::UpdatedAt, SortDir::Asc) => "business_rules.sets:updatedAt:asc",
        (SetSort::UpdatedAt, SortDir::Desc) => "business_rules.sets:updatedAt:desc",
    }
}

fn key_of(row: &SetRow, sort: SetSort) -> SetKey {
    let x = &row.state;
    let value = match sort {
        SetSort::SetId => SortValue::Text(x.set_id.clone()),
        SetSort::SetName => SortValue::Text(x.set_name.clone()),
        SetSort::Enabled => SortValue::Bool(x.enabled),
        SetSort::CreatedAt => SortValue::time(x.created_at),
        SetSort::UpdatedAt => SortValue::time(row.updated_at),
    };
    (value, x.id)
}

type Boxed<'a> = s::BoxedQuery<'a, diesel::pg::Pg>;

fn filtered<'a>(ctx: &AuthContext, tenant: Uuid, q: &'a SetListQuery) -> Boxed<'a> {
    let mut query = s::table
        .filter(s::tenant_id.eq(tenant))
        .filter(s::deleted_at.is_null())
        .into_boxed();
    if let Some(orgs) = &ctx.acl.visible_organization_ids {
        query = query.filter(s::organization_id.eq_any(orgs.clone()));
    }
    if let Some(id) = q.id {
        query = query.filter(s::id.eq(id));
    }
    if let Some(x) = q.search.as_deref().filter(|x| !x.trim().is_empty()) {
        query = query.filter(s::set_name.ilike(format!("%{}%", escape_like(x.trim()))));
    }
    if let Some(x) = q.set_id.as_deref().filter(|x| !x.trim().is_empty()) {
        query = query.filter(s::set_id.ilike(format!("%{}%", escape_like(x.trim()))));
    }
    if let Some(e) = q.enabled {
        query = query.filter(s::enabled.eq(e));
    }
    query
}

/// [`filtered`] plus, in keyset mode, "after the cursor's row".
fn windowed<'a>(
    ctx: &AuthContext,
    tenant: Uuid,
    q: &'a SetListQuery,
    (sort, desc): (SetSort, bool),
    after: Option<&SetKey>,
) -> Result<Boxed<'a>, AppError> {
    let query = filtered(ctx, tenant, q);
    let Some((value, id)) = after else {
        return Ok(query);
    };
    let tail = s::id.gt(*id);
    Ok(match sort {
        SetSort::SetId => after!(query, s::set_id, value.text()?, desc, tail),
        SetSort::SetName => after!(query, s::set_name, value.text()?, desc, tail),
        SetSort::Enabled => after!(query, s::enabled, value.flag()?, desc, tail),
        SetSort::CreatedAt => after!(query, s::created_at, value.at()?, desc, tail),
        SetSort::UpdatedAt => after!(query, s::updated_at, value.at()?, desc, tail),
    })
}

/// The read models a set-list page is computed from (migration
/// `business_rules_read_versions`).
pub const READ_DEPS: &[&str] = &["business_rules.sets"];

/// `GET /business_rules/sets`: one statement for the page, its capped count
/// and its read versions (a second one only for a page past the end, which
/// is then not kept). Default order: `setId`, ascending; ties by id.
pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    q: &SetListQuery,
    params: &ListParams,
) -> Result<Kept<SetList>, AppError> {
    let tenant = ctx.tenant().map_err(|_| RulesError::ScopeRequired)?;
    let deps = ReadDeps::new(READ_DEPS, Some(tenant));
    let sort = q.sort_field.unwrap_or(SetSort::SetId);
    let dir = q.sort_dir.unwrap_or(SortDir::Asc);
    let req: ListRequest<SetKey> = list_request(q.page, q.page_size, params, tag(sort, dir))?;
    let order = (sort, dir == SortDir::Desc);
    let after = req.after.as_ref();
    let query = windowed(ctx, tenant, q, order, after)?;
    let desc = order.1;
    let query = match sort {
        SetSort::SetId => by!(query, s::set_id, desc),
        SetSort::SetName => by!(query, s::set_name, desc),
        SetSort::Enabled => by!(query, s::enabled, desc),
        SetSort::CreatedAt => by!(query, s::created_at, desc),
        SetSort::UpdatedAt => by!(query, s::updated_at, desc),
    };
    let counted = windowed(ctx, tenant, q, order, after)?.select(s::id);
    let rows: Vec<(SetRow, i64, Vec<i64>)> = query
        .then_order_by(s::id.asc())
        .select((SetRow::as_select(), req.count(counted), versions(deps)))
        .offset(req.offset())
        .limit(req.limit())
        .load(conn)
        .await?;
    let mut count = <[_]>::first(&rows).map(|r| r.1);
    let versions = <[_]>::first(&rows).map(|r| r.2.clone());
    if req.needs_separate_count(rows.len()) {
        let again = windowed(ctx, tenant, q, order, after)?.select(s::id);
        count = Some(diesel::select(req.count(again)).get_result(conn).await?);
    }
    let rows: Vec<SetRow> = rows.into_iter().map(|r| r.0).collect();
    let page = req.finish(rows, count, |row| key_of(row, sort));
    Ok(Kept {
        value: SetList {
            page: page.map(item),
        },
        deps,
        versions,
    })
}
