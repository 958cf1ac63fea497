//! The SQL of devices: lists, reads and locks, writes. Every function takes
//! a connection, so the service composes them into one transaction with the
//! command bus; none knows HTTP. Every query filters by the tenant.

mod list;
mod write;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::UserDirectory;
use stoa_core::AppError;
use uuid::Uuid;

use crate::error::DevicesError;
use crate::model::DeviceRow;
use crate::schema::user_devices::dsl as d;

pub use list::{DeviceKey, ListFilter, cursor_tag, key_of, list};
pub use stoa_acl::Scope;
pub use write::{
    Change, Registration, apply_change, deactivate, register_now, registered, restore,
};

/// A live device of the tenant.
pub async fn find_live(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    id: Uuid,
) -> QueryResult<Option<DeviceRow>> {
    d::user_devices
        .filter(d::id.eq(id))
        .filter(d::tenant_id.eq(tenant))
        .filter(d::deleted_at.is_null())
        .select(DeviceRow::as_select())
        .first(conn)
        .await
        .optional()
}

/// The device `id`, live or not, of any tenant, locked until the transaction
/// ends (undo and redo load it this way; the caller checks the tenant).
pub async fn lock_any(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<Option<DeviceRow>> {
    d::user_devices
        .filter(d::id.eq(id))
        .select(DeviceRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()
}

/// The home organization of a live user of `tenant` (looked up through the
/// [`UserDirectory`] the server hands over);
/// [`DevicesError::TargetUserNotFound`] when there is no such user.
pub async fn target_user_organization(
    conn: &mut AsyncPgConnection,
    users: &dyn UserDirectory,
    tenant: Uuid,
    user: Uuid,
) -> Result<Option<Uuid>, AppError> {
    let row = users
        .user(conn, user)
        .await?
        .filter(|u| u.tenant_id == Some(tenant))
        .ok_or(DevicesError::TargetUserNotFound)?;
    Ok(row.organization_id)
}
