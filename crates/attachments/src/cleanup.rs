//! Removes a deleted attachment's objects (original and variants) after the
//! deletion commits. It is an outbox subscriber, so it runs at least once
//! even when the process dies between the commit and the removal: the event
//! is in the outbox with the deletion and is delivered (again) later.

use futures_util::future::BoxFuture;
use stoa_core::command::outbox::{Delivered, Subscriber};
use stoa_core::storage::Storage;
use uuid::Uuid;

use crate::commands::DELETED_EVENT;
use crate::store;

pub struct StorageCleanup {
    storage: Storage,
}

impl StorageCleanup {
    pub fn new(storage: Storage) -> Self {
        Self { storage }
    }
}

impl Subscriber for StorageCleanup {
    fn id(&self) -> &str {
        "attachments.storage_cleanup"
    }

    fn accepts(&self, name: &str) -> bool {
        name == DELETED_EVENT
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
            // Deleting what is already gone is fine: a retry is harmless.
            store::remove_all(&self.storage, tenant, id)
                .await
                .map_err(|e| e.to_string())
        })
    }
}
