//! Product writes as undoable commands.
//!
//! - `catalog.products.create`: undo deletes the product, redo puts it back
//!   with the same id.
//! - `catalog.products.update`: undo puts the previous state back.
//! - `catalog.products.delete`: the row is deleted for good (as the
//!   reference); undo puts it back with its id and creation time.
//!
//! Every write goes through the resource kit (`stoa_acl::resource`):
//! [`ProductState`] implements `Tracked` and `Resource`; the kit's `Save`
//! command writes and records, and undo and redo go through the shared
//! `stoa_core::command::StateHandler`, whose `authorize` (the kit's) repeats
//! the routes' checks for the caller of the undo (tenant, organization
//! reach, `catalog.products.manage`) on both the current and the target state. Every entry
//! emits its domain event (`catalog.product.created|updated|deleted`, payload
//! with the id, the product's tenant and organization) in the write's
//! transaction.

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use serde_json::{Value, json};
use stoa_acl::resource::{self, Resource};
use stoa_core::AppError;
use stoa_core::command::tracked::{StateHandler, Tracked, entry};
use stoa_core::command::{CommandHandler, LogEntry};
use uuid::Uuid;

use crate::MANAGE;
use crate::error::CatalogError;
use crate::model::{ProductRow, ProductState};
use crate::queries;

/// The action log's resource kind of a product.
pub const PRODUCT_KIND: &str = "catalog.product";
pub const CREATE: &str = "catalog.products.create";
pub const UPDATE: &str = "catalog.products.update";
pub const DELETE: &str = "catalog.products.delete";

pub const CREATED_EVENT: &str = "catalog.product.created";
pub const UPDATED_EVENT: &str = "catalog.product.updated";
pub const DELETED_EVENT: &str = "catalog.product.deleted";

fn rfc3339(ts: time::OffsetDateTime) -> Value {
    stoa_core::serde_util::timestamp::value(ts)
}

/// The snapshot shown in the action log.
pub fn view(state: &ProductState) -> Value {
    json!({
        "id": state.id,
        "tenantId": state.tenant_id,
        "organizationId": state.organization_id,
        "title": state.title,
        "subtitle": state.subtitle,
        "description": state.description,
        "sku": state.sku,
        "handle": state.handle,
        "productType": state.product_type,
        "isActive": state.is_active,
        "priceAmount": state.price_amount,
        "priceCurrency": state.price_currency,
        "createdAt": rfc3339(state.created_at),
    })
}

/// The payload of a product's domain event: what a subscriber (business
/// rules) filters on without reading the product.
fn event_payload(state: &ProductState) -> Value {
    json!({
        "id": state.id,
        "tenantId": state.tenant_id,
        "organizationId": state.organization_id,
        "sku": state.sku,
        "title": state.title,
    })
}

/// The entry of a change of a product from `before` to `after` (`None`:
/// absent), with its event. The entry (and the event's envelope) stays in
/// the actor's organization, where undo looks for it; the payload names the
/// product's own organization.
pub fn product_entry(
    label: &str,
    event: &str,
    before: Option<&ProductState>,
    after: Option<&ProductState>,
) -> LogEntry {
    let any = after.or(before);
    let id = any.map(|s| s.id).unwrap_or_default();
    let log = entry(label, id, before, after);
    match any {
        Some(state) => log.with_event(event, event_payload(state)),
        None => log,
    }
}

/// The entry of a product deleted by a bulk job (`row` as it was).
pub fn deleted_entry(row: &ProductRow) -> LogEntry {
    product_entry(
        "Delete product",
        DELETED_EVENT,
        Some(&ProductState::from(row)),
        None,
    )
}

impl Tracked for ProductState {
    const KIND: &'static str = PRODUCT_KIND;

    /// The product row.
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        Ok(queries::lock(conn, id).await?.as_ref().map(Self::from))
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        queries::restore(conn, self).await?;
        Ok(())
    }

    /// Undo of a create: the product goes for good, as a delete does.
    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        queries::delete(conn, id).await?;
        Ok(())
    }

    fn view(&self) -> Value {
        view(self)
    }

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    stoa_acl::kit_authorize!();
}

/// A product through the resource kit: `catalog.products.manage` and its
/// organization (`AuthContext::reach`: another organization's product is
/// 404, as an unknown one, so its id and organization are not confirmed).
/// The organization a write moves a product to is checked by the service
/// (inside the caller's organizations, a live one of the tenant) before
/// the kit runs.
impl Resource for ProductState {
    const TABLE: &'static str = "catalog_products";
    const FEATURE: &'static str = MANAGE;
    type Services = ();

    stoa_acl::resource_identity!();
    fn not_found() -> AppError {
        CatalogError::NotFound.into()
    }
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        let event = match (before, after) {
            (None, _) => CREATED_EVENT,
            (_, None) => DELETED_EVENT,
            _ => UPDATED_EVENT,
        };
        product_entry(label, event, before, after)
    }
    /// One statement: the upsert returns the row as stored (with its new
    /// `updated_at`).
    async fn save(&self, conn: &mut AsyncPgConnection) -> Result<Self, AppError> {
        Ok(Self::from(&queries::restore(conn, self).await?))
    }
}

/// The undo/redo handlers of the catalog module: the shared state handler.
pub fn handlers() -> Vec<Arc<dyn CommandHandler>> {
    vec![
        StateHandler::<ProductState>::boxed(CREATE),
        StateHandler::<ProductState>::boxed(UPDATE),
        StateHandler::<ProductState>::boxed(DELETE),
    ]
}
