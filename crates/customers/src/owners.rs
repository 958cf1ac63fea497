//! Who may own a deal: a live user of the deal's tenant, looked up through
//! the `stoa_acl::UserDirectory` the server hands over.
//!
//! Undo and redo (`Tracked::authorize`) repeat the check but receive no
//! module services, so [`crate::configure`] also installs the directory
//! here, once per process (`Resource::installed` of a deal); without it an
//! undo that changes an owner is refused (fail closed).

use std::sync::{Arc, OnceLock};

use diesel_async::AsyncPgConnection;
use stoa_acl::UserDirectory;
use stoa_core::AppError;
use uuid::Uuid;

use crate::error::CustomersError;

static USERS: OnceLock<Arc<dyn UserDirectory>> = OnceLock::new();

/// Installs the user directory undo and redo check owners with (the first
/// one wins: every caller passes the same accounts).
pub fn install(users: Arc<dyn UserDirectory>) {
    let _ = USERS.set(users);
}

/// 400 `Owner not found in this tenant` unless `owner` is a live user of `tenant`.
pub async fn check(
    users: &dyn UserDirectory,
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    owner: Uuid,
) -> Result<(), AppError> {
    match users.user(conn, owner).await? {
        Some(user) if user.tenant_id == Some(tenant) => Ok(()),
        _ => Err(CustomersError::OwnerNotFound.into()),
    }
}

/// The installed directory (`None` before [`crate::configure`] ran): the AI
/// tools, which receive no module services either, look owners up with it.
pub fn installed() -> Option<Arc<dyn UserDirectory>> {
    USERS.get().cloned()
}
