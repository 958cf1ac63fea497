//! `GET /customers/deals`: one statement for the page, its capped total and
//! the keyset cursor (`stoa_core::list`), whatever the filters.
//!
//! Every sort orders by a non-null expression and then the id, so the
//! cursor's `(value, id)` condition continues exactly after the last row:
//! a missing value sorts as `-1` (value, probability) or as the year 9999
//! (expected close date).

use diesel::dsl::sql;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Int4, Numeric, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::list::{ListParams, ListRequest, SortDir, in_page};
use stoa_core::money::Money;
use stoa_core::prepared::Cached;
use stoa_core::search::escape_like;
use stoa_core::{AppError, Page};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::dto::{DealList, DealListQuery, DealSort};
use crate::model::{DealItem, DealRow};
use crate::schema::customer_deals;

/// Who lists: the tenant and the organizations it sees (`None`: all).
pub struct ListScope<'a> {
    pub tenant_id: Uuid,
    pub organizations: Option<&'a [Uuid]>,
}

/// The sort key a cursor carries: the sort expression's value as text and the id.
pub type DealKey = (String, Uuid);

/// The value column, as the range filters name it.
const VALUE_COLUMN: &str = "customer_deals.value_amount";

const NO_CLOSE_DATE: &str = "'9999-12-31 00:00:00+00'::timestamptz";

fn sort_expr(sort: DealSort) -> &'static str {
    match sort {
        DealSort::CreatedAt => "customer_deals.created_at",
        DealSort::UpdatedAt => "customer_deals.updated_at",
        DealSort::Title => "customer_deals.title",
        DealSort::Value => "COALESCE(customer_deals.value_amount, -1)",
        DealSort::Probability => "COALESCE(customer_deals.probability, -1)",
        DealSort::ExpectedCloseAt => {
            "COALESCE(customer_deals.expected_close_at, '9999-12-31 00:00:00+00'::timestamptz)"
        }
    }
}

/// The cursor tag: list, sort field and direction (a cursor of another sort is 400).
fn tag(sort: DealSort, dir: SortDir) -> &'static str {
    use DealSort::*;
    use SortDir::*;
    match (sort, dir) {
        (CreatedAt, Asc) => "customers.deals:createdAt:asc",
        (CreatedAt, Desc) => "customers.deals:createdAt:desc",
        (UpdatedAt, Asc) => "customers.deals:updatedAt:asc",
        (UpdatedAt, Desc) => "customers.deals:updatedAt:desc",
        (Title, Asc) => "customers.deals:title:asc",
        (Title, Desc) => "customers.deals:title:desc",
        (Value, Asc) => "customers.deals:value:asc",
        (Value, Desc) => "customers.deals:value:desc",
        (Probability, Asc) => "customers.deals:probability:asc",
        (Probability, Desc) => "customers.deals:probability:desc",
        (ExpectedCloseAt, Asc) => "customers.deals:expectedCloseAt:asc",
        (ExpectedCloseAt, Desc) => "customers.deals:expectedCloseAt:desc",
    }
}

fn micros(t: OffsetDateTime) -> String {
    (t.unix_timestamp_nanos() / 1_000).to_string()
}

fn from_micros(raw: &str) -> Option<OffsetDateTime> {
    let n: i128 = raw.parse().ok()?;
    OffsetDateTime::from_unix_timestamp_nanos(n * 1_000).ok()
}

/// The sort value of a row, as its cursor carries it.
fn key_of(sort: DealSort) -> impl Fn(&DealItem) -> DealKey {
    move |d: &DealItem| {
        let value = match sort {
            DealSort::CreatedAt => micros(d.created_at),
            DealSort::UpdatedAt => micros(d.updated_at),
            DealSort::Title => d.title.clone(),
            DealSort::Value => d
                .value_amount
                .map_or_else(|| "-1".to_string(), |m| m.to_string()),
            DealSort::Probability => d.probability.unwrap_or(-1).to_string(),
            DealSort::ExpectedCloseAt => match d.expected_close_at {
                Some(t) => micros(t),
                None => "none".to_string(),
            },
        };
        (value, d.id)
    }
}

fn bad_cursor() -> AppError {
    AppError::bad_request("Invalid query parameters: cursor: not a cursor of this list")
}

type Boxed = customer_deals::BoxedQuery<'static, Pg>;

/// Adds `(sort expression, id) >|< (value, id)` for the cursor's key.
fn after_key(query: Boxed, sort: DealSort, dir: SortDir, key: &DealKey) -> Result<Boxed, AppError> {
    let op = match dir {
        SortDir::Asc => ">",
        SortDir::Desc => "<",
    };
    let head = format!("({}, customer_deals.id) {op} (", sort_expr(sort));
    let (raw, id) = (key.0.as_str(), key.1);
    let query = match sort {
        DealSort::CreatedAt | DealSort::UpdatedAt => {
            let at = from_micros(raw).ok_or_else(bad_cursor)?;
            query.filter(
                sql::<Bool>(&head)
                    .bind::<Timestamptz, _>(at)
                    .sql(", ")
                    .bind::<diesel::sql_types::Uuid, _>(id)
                    .sql(")"),
            )
        }
        DealSort::ExpectedCloseAt => {
            if raw == "none" {
                let head = format!(
                    "({}, customer_deals.id) {op} ({NO_CLOSE_DATE}, ",
                    sort_expr(sort)
                );
                query.filter(
                    sql::<Bool>(&head)
                        .bind::<diesel::sql_types::Uuid, _>(id)
                        .sql(")"),
                )
            } else {
                let at = from_micros(raw).ok_or_else(bad_cursor)?;
                query.filter(
                    sql::<Bool>(&head)
                        .bind::<Timestamptz, _>(at)
                        .sql(", ")
                        .bind::<diesel::sql_types::Uuid, _>(id)
                        .sql(")"),
                )
            }
        }
        DealSort::Title => query.filter(
            sql::<Bool>(&head)
                .bind::<Text, _>(raw.to_string())
                .sql(", ")
                .bind::<diesel::sql_types::Uuid, _>(id)
                .sql(")"),
        ),
        DealSort::Value => {
            let value: Money = raw.parse().map_err(|_| bad_cursor())?;
            query.filter(
                sql::<Bool>(&head)
                    .bind::<Numeric, _>(value)
                    .sql(", ")
                    .bind::<diesel::sql_types::Uuid, _>(id)
                    .sql(")"),
            )
        }
        DealSort::Probability => {
            let value: i32 = raw.parse().map_err(|_| bad_cursor())?;
            query.filter(
                sql::<Bool>(&head)
                    .bind::<Int4, _>(value)
                    .sql(", ")
                    .bind::<diesel::sql_types::Uuid, _>(id)
                    .sql(")"),
            )
        }
    };
    Ok(query)
}

/// The deals in scope matching the filters (no order, no window).
fn filtered(scope: &ListScope<'_>, q: &DealListQuery, pattern: Option<&str>) -> Boxed {
    let mut query = customer_deals::table
        .filter(customer_deals::tenant_id.eq(scope.tenant_id))
        .into_boxed();
    if let Some(orgs) = scope.organizations {
        query = query.filter(customer_deals::organization_id.eq_any(orgs.to_vec()));
    }
    if let Some(id) = q.id {
        query = query.filter(customer_deals::id.eq(id));
    }
    // One value is `=`, several `= ANY(..)`: an index scan can return rows
    // in its order past `=` columns but not past an `= ANY` (Postgres 15),
    // so a stage and owner filter would sort every match before its page.
    match q.status.as_slice() {
        [] => {}
        [one] => query = query.filter(customer_deals::status.eq(one.clone())),
        many => query = query.filter(customer_deals::status.eq_any(many.to_vec())),
    }
    match q.pipeline_id.as_slice() {
        [] => {}
        [one] => query = query.filter(customer_deals::pipeline_id.eq(*one)),
        many => query = query.filter(customer_deals::pipeline_id.eq_any(many.to_vec())),
    }
    match q.pipeline_stage_id.as_slice() {
        [] => {}
        [one] => query = query.filter(customer_deals::pipeline_stage_id.eq(*one)),
        many => query = query.filter(customer_deals::pipeline_stage_id.eq_any(many.to_vec())),
    }
    match q.owner_user_id.as_slice() {
        [] => {}
        [one] => query = query.filter(customer_deals::owner_user_id.eq(*one)),
        many => query = query.filter(customer_deals::owner_user_id.eq_any(many.to_vec())),
    }
    // In ten-thousandths (`Money::e4_sql`: numeric comparisons would get
    // no statistics under row-level security; the migration
    // `customers_deals_value_statistics` keeps them for this expression).
    if let Some(min) = q.value_min {
        query = query.filter(
            sql::<Bool>(&format!("{} >= ", Money::e4_sql(VALUE_COLUMN)))
                .bind::<BigInt, _>(min.ten_thousandths()),
        );
    }
    if let Some(max) = q.value_max {
        query = query.filter(
            sql::<Bool>(&format!("{} <= ", Money::e4_sql(VALUE_COLUMN)))
                .bind::<BigInt, _>(max.ten_thousandths()),
        );
    }
    if let Some(currency) = &q.value_currency {
        query =
            query.filter(customer_deals::value_currency.eq(currency.trim().to_ascii_uppercase()));
    }
    if let Some(from) = q.expected_close_at_from {
        query = query.filter(customer_deals::expected_close_at.ge(from.0));
    }
    if let Some(to) = q.expected_close_at_to {
        query = query.filter(customer_deals::expected_close_at.le(to.0));
    }
    if let Some(pattern) = pattern {
        query = query.filter(
            customer_deals::title
                .ilike(pattern.to_string())
                .or(customer_deals::description.ilike(pattern.to_string()))
                .or(customer_deals::source.ilike(pattern.to_string())),
        );
    }
    query
}

/// One page of deals: rows, capped total and cursor in one statement.
pub async fn list(
    conn: &mut AsyncPgConnection,
    scope: &ListScope<'_>,
    q: &DealListQuery,
    page: Page,
    params: &ListParams,
) -> Result<(DealList, ReadDeps, Option<Vec<i64>>), AppError> {
    let deps = ReadDeps::new(READ_DEPS, Some(scope.tenant_id));
    let sort = q.sort_field.unwrap_or(DealSort::CreatedAt);
    let dir = q.sort_dir.unwrap_or(SortDir::Desc);
    let req = ListRequest::<DealKey>::new(page, params, tag(sort, dir))?;
    let pattern = q
        .search
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| format!("%{}%", escape_like(s)));
    let keyed = || -> Result<Boxed, AppError> {
        let query = filtered(scope, q, pattern.as_deref());
        match &req.after {
            Some(key) => after_key(query, sort, dir, key),
            None => Ok(query),
        }
    };
    let order = match dir {
        SortDir::Asc => format!("{} ASC, customer_deals.id ASC", sort_expr(sort)),
        SortDir::Desc => format!("{} DESC, customer_deals.id DESC", sort_expr(sort)),
    };
    // The window is chosen by id in a subquery, so the outer select reads
    // the page's rows only.
    let window = keyed()?
        .select(customer_deals::id)
        .order(sql::<Bool>(&order))
        .limit(req.limit())
        .offset(req.offset());
    let rows: Vec<(DealRow, i64, Vec<i64>)> = Cached(
        customer_deals::table
            .filter(in_page(customer_deals::id, window))
            .select((
                DealRow::as_select(),
                req.count(keyed()?.select(customer_deals::id)),
                versions(deps),
            ))
            .order(sql::<Bool>(&order)),
    )
    .load(conn)
    .await?;
    let mut counted = <[(DealRow, i64, Vec<i64>)]>::first(&rows).map(|r| r.1);
    let read_versions = <[(DealRow, i64, Vec<i64>)]>::first(&rows).map(|r| r.2.clone());
    if req.needs_separate_count(rows.len()) {
        counted = Some(
            diesel::select(req.count(keyed()?.select(customer_deals::id)))
                .get_result(conn)
                .await?,
        );
    }
    let items: Vec<DealItem> = rows.into_iter().map(|(row, _, _)| row.into()).collect();
    let page = req.finish(items, counted, key_of(sort));
    let list = DealList { page };
    Ok((list, deps, read_versions))
}

/// The read model of the deal list: every write to `customer_deals` bumps
/// its tenant's version (migration `customers_deals_read_version`), so a
/// session's kept page is served again only while no deal of the tenant
/// changed.
pub const READ_DEPS: &[&str] = &["customers.deals"];
