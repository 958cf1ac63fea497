//! The SQL of products: reads and locks, writes, bulk deletion and the list.
//! Every function takes a connection, so the service composes them into one
//! transaction with the command bus; none knows HTTP.

mod list;

use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::CatalogError;
use crate::model::{ProductRow, ProductState};
use crate::schema::catalog_products::dsl as p;

pub use list::{ListFilter, ProductKey, READ_DEPS, cursor_tag, key_of, list};
pub use stoa_acl::Scope;

/// A product of the tenant.
pub async fn find(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    id: Uuid,
) -> QueryResult<Option<ProductRow>> {
    p::catalog_products
        .filter(p::id.eq(id))
        .filter(p::tenant_id.eq(tenant))
        .select(ProductRow::as_select())
        .first(conn)
        .await
        .optional()
}

/// The product `id` of any tenant, locked until the transaction ends (the
/// caller checks the tenant: undo, redo and writes load it this way).
pub async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<Option<ProductRow>> {
    p::catalog_products
        .filter(p::id.eq(id))
        .select(ProductRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()
}

/// The products among `ids` (any tenant), locked until the transaction ends.
pub async fn lock_many(conn: &mut AsyncPgConnection, ids: &[Uuid]) -> QueryResult<Vec<ProductRow>> {
    p::catalog_products
        .filter(p::id.eq_any(ids))
        .select(ProductRow::as_select())
        .order(p::id)
        .for_update()
        .load(conn)
        .await
}

/// Deletes the products `ids` (already locked and checked): one statement.
pub async fn delete_many(conn: &mut AsyncPgConnection, ids: &[Uuid]) -> QueryResult<usize> {
    diesel::delete(p::catalog_products.filter(p::id.eq_any(ids)))
        .execute(conn)
        .await
}

/// Deletes one product.
pub async fn delete(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<usize> {
    diesel::delete(p::catalog_products.filter(p::id.eq(id)))
        .execute(conn)
        .await
}

/// Writes `state` (a create, an update, an undo or redo): inserts it with
/// its id and creation time, or overwrites the live one; either way the row
/// gets a new `updated_at` (its optimistic-lock version). A SKU or handle
/// taken by another product is a 409.
pub async fn restore(
    conn: &mut AsyncPgConnection,
    state: &ProductState,
) -> Result<ProductRow, CatalogError> {
    let now = OffsetDateTime::now_utc();
    Ok(diesel::insert_into(p::catalog_products)
        .values((
            p::id.eq(state.id),
            p::tenant_id.eq(state.tenant_id),
            p::organization_id.eq(state.organization_id),
            p::title.eq(&state.title),
            p::subtitle.eq(&state.subtitle),
            p::description.eq(&state.description),
            p::sku.eq(&state.sku),
            p::handle.eq(&state.handle),
            p::product_type.eq(&state.product_type),
            p::is_active.eq(state.is_active),
            p::price_amount.eq(state.price_amount),
            p::price_currency.eq(&state.price_currency),
            p::created_at.eq(state.created_at),
            p::updated_at.eq(now),
        ))
        .on_conflict(p::id)
        .do_update()
        .set((
            p::organization_id.eq(excluded(p::organization_id)),
            p::title.eq(excluded(p::title)),
            p::subtitle.eq(excluded(p::subtitle)),
            p::description.eq(excluded(p::description)),
            p::sku.eq(excluded(p::sku)),
            p::handle.eq(excluded(p::handle)),
            p::product_type.eq(excluded(p::product_type)),
            p::is_active.eq(excluded(p::is_active)),
            p::price_amount.eq(excluded(p::price_amount)),
            p::price_currency.eq(excluded(p::price_currency)),
            p::updated_at.eq(now),
        ))
        .returning(ProductRow::as_returning())
        .get_result(conn)
        .await?)
}
