//! Product writes as undoable commands.
//!
//! - `catalog.products.create`: undo deletes the product, redo puts it back
//!   with the same id.
//! - `catalog.products.update`: undo puts the previous state back.
//! - `catalog.products.delete`: the row is deleted for good (as the
//!   reference); undo puts it back with its id and creation time.
//!
//! Undo and redo go through the shared `stoa_core::command::StateHandler`:
//! [`ProductState`] implements `Tracked`, and its `authorize` repeats the
//! routes' checks for the caller of the undo (tenant, `catalog.products.manage`,
//! organization scope) on both the current and the target state. Every entry
//! emits its domain event (`catalog.product.created|updated|deleted`, payload
//! with the id, the product's tenant and organization) in the write's
//! transaction.

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::tracked::{StateHandler, Tracked, entry, lock_row};
use stoa_core::command::{Actor, Command, CommandHandler, LogEntry};
use uuid::Uuid;

use crate::MANAGE;
use crate::error::CatalogError;
use crate::model::{ProductRow, ProductState};
use crate::queries::{self, NewProduct, ProductChanges};

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

/// The rules every product write checks for `ctx`: the product is of the
/// caller's tenant (else 404), the caller holds `catalog.products.manage`
/// and reaches the product's organization (`AuthContext::require_writable`:
/// another organization's product is 404, as an unknown one, so its id and
/// organization are not confirmed).
pub fn may_write(ctx: &AuthContext, tenant: Uuid, organization: Uuid) -> Result<(), AppError> {
    if ctx.tenant_id != Some(tenant) {
        return Err(CatalogError::NotFound.into());
    }
    ctx.require(MANAGE)?;
    ctx.require_writable(Some(tenant), Some(organization), || {
        CatalogError::NotFound.into()
    })
}

impl Tracked for ProductState {
    const KIND: &'static str = PRODUCT_KIND;

    /// The product row.
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        lock_row(conn, "catalog_products", id).await
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

    async fn authorize(
        _: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let ctx = AuthContext::of(actor)?;
        for state in [current, target].into_iter().flatten() {
            may_write(ctx, state.tenant_id, state.organization_id)?;
        }
        Ok(())
    }
}

/// Creates a product (already checked by the service).
pub struct CreateProductCommand(pub NewProduct);

impl Command for CreateProductCommand {
    type Output = ProductRow;
    fn id(&self) -> &'static str {
        CREATE
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(ProductRow, LogEntry), AppError>> {
        Box::pin(async move {
            let row = queries::insert(conn, &self.0).await?;
            let after = ProductState::from(&row);
            let log = product_entry("Create product", CREATED_EVENT, None, Some(&after));
            Ok((row, log))
        })
    }
}

/// Changes a product; the service locked and checked it in this transaction.
pub struct UpdateProductCommand {
    pub id: Uuid,
    pub changes: ProductChanges,
}

impl Command for UpdateProductCommand {
    type Output = ();
    fn id(&self) -> &'static str {
        UPDATE
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let before = locked_state(conn, self.id).await?;
            let row = queries::update(conn, self.id, &self.changes).await?;
            let after = ProductState::from(&row);
            let log = product_entry("Update product", UPDATED_EVENT, Some(&before), Some(&after));
            Ok(((), log))
        })
    }
}

/// Deletes a product for good; the service locked and checked it.
pub struct DeleteProductCommand {
    pub id: Uuid,
}

impl Command for DeleteProductCommand {
    type Output = ();
    fn id(&self) -> &'static str {
        DELETE
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let before = locked_state(conn, self.id).await?;
            queries::delete(conn, self.id).await?;
            let log = product_entry("Delete product", DELETED_EVENT, Some(&before), None);
            Ok(((), log))
        })
    }
}

/// The product's state under the lock every writer takes first
/// (`Tracked::lock`), as a command records it.
async fn locked_state(conn: &mut AsyncPgConnection, id: Uuid) -> Result<ProductState, AppError> {
    ProductState::lock(conn, id).await?;
    Ok(ProductState::load(conn, id)
        .await?
        .ok_or(CatalogError::NotFound)?)
}

/// The undo/redo handlers of the catalog module: the shared state handler.
pub fn handlers() -> Vec<Arc<dyn CommandHandler>> {
    vec![
        StateHandler::<ProductState>::boxed(CREATE),
        StateHandler::<ProductState>::boxed(UPDATE),
        StateHandler::<ProductState>::boxed(DELETE),
    ]
}
