//! The rules of devices, between the handlers and the SQL
//! ([`crate::queries`]): who acts and where, list requests, and every write
//! in one transaction with its command (so a change and its action-log entry
//! commit together). Nothing here builds an HTTP response.
//!
//! The queries are re-exported here, so `service::register`,
//! `service::Registration` and the others keep their paths.

pub mod listing;
pub mod writes;

use stoa_acl::AuthContext;
use uuid::Uuid;

pub use crate::queries::{
    Change, DeviceKey, ListFilter, Registration, Scope, apply_change, cursor_tag, deactivate,
    find_live, key_of, list, lock_any, register_now, registered, restore, target_user_organization,
};

/// The organization a caller's own writes go to: the selected one, else the
/// home organization (when the caller acts in its own tenant).
pub fn write_organization(ctx: &AuthContext) -> Option<Uuid> {
    ctx.organization_id().or_else(|| {
        ctx.home_organization_id
            .filter(|_| ctx.tenant_id.is_some() && ctx.tenant_id == ctx.actor_tenant_id)
    })
}
