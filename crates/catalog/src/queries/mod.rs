//! The SQL of products: reads and locks, writes, bulk deletion and the list.
//! Every function takes a connection, so the service composes them into one
//! transaction with the command bus; none knows HTTP.

mod list;

use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::money::Money;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::CatalogError;
use crate::model::{ProductRow, ProductState};
use crate::schema::catalog_products::{self, dsl as p};

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

/// A new product, as the service resolved it.
#[derive(Clone, Debug, Insertable)]
#[diesel(table_name = catalog_products)]
pub struct NewProduct {
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub title: String,
    pub subtitle: Option<String>,
    pub description: Option<String>,
    pub sku: Option<String>,
    pub handle: Option<String>,
    pub product_type: String,
    pub is_active: bool,
    pub price_amount: Option<Money>,
    pub price_currency: Option<String>,
}

pub async fn insert(
    conn: &mut AsyncPgConnection,
    product: &NewProduct,
) -> Result<ProductRow, CatalogError> {
    Ok(diesel::insert_into(p::catalog_products)
        .values(product)
        .returning(ProductRow::as_returning())
        .get_result(conn)
        .await?)
}

/// Column changes; `None` leaves a column alone, `Some(None)` clears it.
#[derive(Clone, Debug, Default, AsChangeset)]
#[diesel(table_name = catalog_products)]
pub struct ProductChanges {
    pub organization_id: Option<Uuid>,
    pub title: Option<String>,
    pub subtitle: Option<Option<String>>,
    pub description: Option<Option<String>>,
    pub sku: Option<Option<String>>,
    pub handle: Option<Option<String>>,
    pub product_type: Option<String>,
    pub is_active: Option<bool>,
    pub price_amount: Option<Option<Money>>,
    pub price_currency: Option<Option<String>>,
    /// Stamped explicitly so an update that changes nothing still moves it
    /// (the trigger stamps it too).
    pub updated_at: Option<OffsetDateTime>,
}

pub async fn update(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    changes: &ProductChanges,
) -> Result<ProductRow, CatalogError> {
    Ok(diesel::update(p::catalog_products.filter(p::id.eq(id)))
        .set(changes)
        .returning(ProductRow::as_returning())
        .get_result(conn)
        .await?)
}

/// Deletes one product.
pub async fn delete(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<usize> {
    diesel::delete(p::catalog_products.filter(p::id.eq(id)))
        .execute(conn)
        .await
}

/// Writes `state` back (undo and redo): puts a deleted product back with its
/// id and creation time, or overwrites the live one. A SKU or handle taken
/// meanwhile by another product is a 409.
pub async fn restore(
    conn: &mut AsyncPgConnection,
    state: &ProductState,
) -> Result<(), CatalogError> {
    diesel::insert_into(p::catalog_products)
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
            p::updated_at.eq(OffsetDateTime::now_utc()),
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
        ))
        .execute(conn)
        .await?;
    Ok(())
}
