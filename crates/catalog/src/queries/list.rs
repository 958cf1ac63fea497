//! The product list: filters, the keyset cursor of each order and the page
//! with its capped count in one statement. Built from diesel's DSL only (no
//! SQL fragments), so the statement stays prepared on the connection.

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use stoa_core::AppError;
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::list::ListRequest;
use stoa_core::prepared::Cached;
use time::OffsetDateTime;
use uuid::Uuid;

use super::Scope;
use crate::dto::{SortDir, SortField};
use crate::model::{ProductRow, ProductType};
use crate::schema::catalog_products::{self, dsl as p};

/// What a list shows (inside the caller's scope).
#[derive(Clone, Debug)]
pub struct ListFilter {
    pub id: Option<Uuid>,
    /// A `LIKE` pattern (escaped, with `%` around it).
    pub search: Option<String>,
    pub is_active: Option<bool>,
    pub product_type: Option<ProductType>,
    pub price_currency: Option<String>,
    pub organization_id: Option<Uuid>,
    pub sort: SortField,
    pub dir: SortDir,
}

/// The sort key of a product-list cursor: the sorted value and the id.
/// Times travel as unix microseconds (Postgres' precision); a product
/// without a SKU has `Text(None, id)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProductKey {
    Text(Option<String>, Uuid),
    Time(i64, Uuid),
}

/// The cursor tag of the list in `sort`/`dir` order (a cursor of one order
/// is 400 in another).
pub fn cursor_tag(sort: SortField, dir: SortDir) -> &'static str {
    match (sort, dir) {
        (SortField::Title, SortDir::Asc) => "catalog.products:title:asc",
        (SortField::Title, SortDir::Desc) => "catalog.products:title:desc",
        (SortField::Sku, SortDir::Asc) => "catalog.products:sku:asc",
        (SortField::Sku, SortDir::Desc) => "catalog.products:sku:desc",
        (SortField::CreatedAt, SortDir::Asc) => "catalog.products:createdAt:asc",
        (SortField::CreatedAt, SortDir::Desc) => "catalog.products:createdAt:desc",
        (SortField::UpdatedAt, SortDir::Asc) => "catalog.products:updatedAt:asc",
        (SortField::UpdatedAt, SortDir::Desc) => "catalog.products:updatedAt:desc",
    }
}

fn micros(at: OffsetDateTime) -> i64 {
    i64::try_from(at.unix_timestamp_nanos() / 1_000).unwrap_or(i64::MAX)
}

/// The sort key of `row` in `sort` order.
pub fn key_of(row: &ProductRow, sort: SortField) -> ProductKey {
    match sort {
        SortField::Title => ProductKey::Text(Some(row.title.clone()), row.id),
        SortField::Sku => ProductKey::Text(row.sku.clone(), row.id),
        SortField::CreatedAt => ProductKey::Time(micros(row.created_at), row.id),
        SortField::UpdatedAt => ProductKey::Time(micros(row.updated_at), row.id),
    }
}

type Boxed = catalog_products::BoxedQuery<'static, Pg>;

fn filtered(scope: &Scope, filter: &ListFilter) -> Boxed {
    let mut q = p::catalog_products
        .filter(p::tenant_id.eq(scope.tenant_id))
        .into_boxed();
    if let Some(orgs) = &scope.visible_organizations {
        q = q.filter(p::organization_id.eq_any(orgs.clone()));
    }
    if let Some(org) = filter.organization_id {
        q = q.filter(p::organization_id.eq(org));
    }
    if let Some(id) = filter.id {
        q = q.filter(p::id.eq(id));
    }
    if let Some(pattern) = &filter.search {
        q = q.filter(
            p::title
                .ilike(pattern.clone())
                .nullable()
                .or(p::sku.ilike(pattern.clone()))
                .or(p::handle.ilike(pattern.clone())),
        );
    }
    if let Some(active) = filter.is_active {
        q = q.filter(p::is_active.eq(active));
    }
    if let Some(kind) = filter.product_type {
        q = q.filter(p::product_type.eq(kind.as_str()));
    }
    if let Some(currency) = &filter.price_currency {
        q = q.filter(p::price_currency.eq(currency.clone()));
    }
    q
}

fn bad_cursor() -> AppError {
    AppError::bad_request("Invalid query parameters: cursor: not a cursor of this list")
}

/// The list's filter plus, in keyset mode, "after the cursor's row" in the
/// list's order. Each condition starts with a range on the sorted column
/// (`col >= v` ascending) so Postgres starts the index scan there.
fn windowed(
    scope: &Scope,
    filter: &ListFilter,
    after: Option<&ProductKey>,
) -> Result<Boxed, AppError> {
    let q = filtered(scope, filter);
    let Some(after) = after else {
        return Ok(q);
    };
    let asc = filter.dir == SortDir::Asc;
    Ok(match (filter.sort, after) {
        (SortField::Title, ProductKey::Text(Some(title), id)) => {
            let (title, id) = (title.clone(), *id);
            if asc {
                q.filter(p::title.ge(title.clone()))
                    .filter(p::title.gt(title).or(p::id.gt(id)))
            } else {
                q.filter(p::title.le(title.clone()))
                    .filter(p::title.lt(title).or(p::id.lt(id)))
            }
        }
        // SKUs: Postgres puts NULLs last ascending and first descending.
        (SortField::Sku, ProductKey::Text(Some(sku), id)) => {
            let (sku, id) = (sku.clone(), *id);
            if asc {
                q.filter(
                    p::sku
                        .gt(sku.clone())
                        .or(p::sku.eq(sku).and(p::id.gt(id)))
                        .or(p::sku.is_null()),
                )
            } else {
                q.filter(p::sku.le(sku.clone()))
                    .filter(p::sku.lt(sku).or(p::id.lt(id)))
            }
        }
        (SortField::Sku, ProductKey::Text(None, id)) => {
            let id = *id;
            if asc {
                q.filter(p::sku.is_null()).filter(p::id.gt(id))
            } else {
                q.filter(p::sku.is_not_null().or(p::id.lt(id)))
            }
        }
        (SortField::CreatedAt | SortField::UpdatedAt, ProductKey::Time(at, id)) => {
            let at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(*at) * 1_000)
                .map_err(|_| bad_cursor())?;
            let id = *id;
            match (filter.sort, asc) {
                (SortField::CreatedAt, true) => q
                    .filter(p::created_at.ge(at))
                    .filter(p::created_at.gt(at).or(p::id.gt(id))),
                (SortField::CreatedAt, false) => q
                    .filter(p::created_at.le(at))
                    .filter(p::created_at.lt(at).or(p::id.lt(id))),
                (_, true) => q
                    .filter(p::updated_at.ge(at))
                    .filter(p::updated_at.gt(at).or(p::id.gt(id))),
                (_, false) => q
                    .filter(p::updated_at.le(at))
                    .filter(p::updated_at.lt(at).or(p::id.lt(id))),
            }
        }
        _ => return Err(bad_cursor()),
    })
}

fn ordered(q: Boxed, sort: SortField, dir: SortDir) -> Boxed {
    // Ties go to the id, in the same direction, so pages never overlap.
    match (sort, dir) {
        (SortField::Title, SortDir::Asc) => q.order((p::title.asc(), p::id.asc())),
        (SortField::Title, SortDir::Desc) => q.order((p::title.desc(), p::id.desc())),
        (SortField::Sku, SortDir::Asc) => q.order((p::sku.asc(), p::id.asc())),
        (SortField::Sku, SortDir::Desc) => q.order((p::sku.desc(), p::id.desc())),
        (SortField::CreatedAt, SortDir::Asc) => q.order((p::created_at.asc(), p::id.asc())),
        (SortField::CreatedAt, SortDir::Desc) => q.order((p::created_at.desc(), p::id.desc())),
        (SortField::UpdatedAt, SortDir::Asc) => q.order((p::updated_at.asc(), p::id.asc())),
        (SortField::UpdatedAt, SortDir::Desc) => q.order((p::updated_at.desc(), p::id.desc())),
    }
}

/// The read models a product-list page is computed from besides the ACL
/// tables: the products themselves (the table's triggers bump it per tenant).
pub const READ_DEPS: &[&str] = &["catalog.products"];

/// One page of products in `scope` matching `filter`, with the (capped)
/// count of `req` and the versions of [`READ_DEPS`] in the same statement:
/// `(rows, counted, versions)` (`versions` is `None` when no row came back).
/// Only a page past the end counts with a second statement.
pub async fn list(
    conn: &mut AsyncPgConnection,
    scope: &Scope,
    filter: &ListFilter,
    req: &ListRequest<ProductKey>,
    deps: ReadDeps,
) -> Result<(Vec<ProductRow>, Option<i64>, Option<Vec<i64>>), AppError> {
    let after = req.after.as_ref();
    let q = ordered(windowed(scope, filter, after)?, filter.sort, filter.dir);
    let counted_query = windowed(scope, filter, after)?.select(p::id);
    type Row = (ProductRow, i64, Vec<i64>);
    // The text is fixed per combination of filters (lists are bound as one
    // array), so the statement stays prepared on the connection.
    let rows: Vec<Row> = Cached(
        q.select((
            ProductRow::as_select(),
            req.count(counted_query),
            versions(deps),
        ))
        .offset(req.offset())
        .limit(req.limit()),
    )
    .load(conn)
    .await?;
    let mut counted = <[Row]>::first(&rows).map(|r| r.1);
    let versions = <[Row]>::first(&rows).map(|r| r.2.clone());
    if req.needs_separate_count(rows.len()) {
        let again = windowed(scope, filter, after)?.select(p::id);
        counted = Some(diesel::select(req.count(again)).get_result(conn).await?);
    }
    Ok((rows.into_iter().map(|r| r.0).collect(), counted, versions))
}
