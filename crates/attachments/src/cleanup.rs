//! Removes a deleted attachment's objects (original and variants) after the
//! deletion commits. It is an outbox subscriber, so it runs at least once
//! even when the process dies between the commit and the removal: the event
//! is in the outbox with the deletion and is delivered (again) later.
//!
//! It deletes files, so it trusts nothing but the deletion itself: only
//! events the attachments module wrote (origin `attachments`, set by the
//! command bus; a business rule's `EMIT_EVENT` of the same name is never
//! delivered here), whose payload names the event's own tenant (the
//! envelope's, set by the bus from the deleted row), and whose attachment row
//! is gone: an event naming a live attachment, or another tenant's, removes
//! nothing.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use stoa_core::command::outbox::{Delivered, Origins, Subscriber};
use stoa_core::db::Db;
use stoa_core::storage::Storage;
use uuid::Uuid;

use crate::commands::DELETED_EVENT;
use crate::schema::attachments as a;
use crate::store;

pub struct StorageCleanup {
    storage: Storage,
    db: Db,
}

impl StorageCleanup {
    pub fn new(storage: Storage, db: Db) -> Self {
        Self { storage, db }
    }

    /// Whether attachment `id` still has a row (in any tenant: the
    /// dispatcher reads across tenants).
    async fn still_stored(&self, id: Uuid) -> Result<bool, String> {
        let mut conn = self.db.conn().await.map_err(|e| e.to_string())?;
        let found: Option<Uuid> = a::table
            .filter(a::id.eq(id))
            .select(a::id)
            .first(&mut *conn)
            .await
            .optional()
            .map_err(|e| e.to_string())?;
        Ok(found.is_some())
    }
}

impl Subscriber for StorageCleanup {
    fn id(&self) -> &str {
        "attachments.storage_cleanup"
    }

    fn accepts(&self, name: &str) -> bool {
        name == DELETED_EVENT
    }

    /// Only the attachments module's own deletions: an event of that name
    /// written by anyone else (a business rule's `EMIT_EVENT`) deletes nothing.
    fn origins(&self) -> Origins {
        Origins::Only(&["attachments"])
    }

    fn handle<'a>(&'a self, event: &'a Delivered) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let id = event.payload.get("id").and_then(|v| v.as_str());
            let tenant = event.payload.get("tenantId").and_then(|v| v.as_str());
            let (Some(id), Some(tenant)) = (
                id.and_then(|v| v.parse::<Uuid>().ok()),
                tenant.and_then(|v| v.parse::<Uuid>().ok()),
            ) else {
                tracing::warn!(event_id = %event.event_id, "attachment deletion without ids");
                return Ok(());
            };
            if event.tenant_id != Some(tenant) {
                tracing::warn!(
                    event_id = %event.event_id,
                    "attachment deletion naming another tenant than its own: ignored"
                );
                return Ok(());
            }
            if self.still_stored(id).await? {
                tracing::warn!(
                    event_id = %event.event_id,
                    attachment = %id,
                    "attachment deletion of a live attachment: its files stay"
                );
                return Ok(());
            }
            // Deleting what is already gone is fine: a retry is harmless.
            store::remove_all(&self.storage, tenant, id)
                .await
                .map_err(|e| e.to_string())
        })
    }
}
