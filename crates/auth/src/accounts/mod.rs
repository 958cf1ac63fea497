//! Account administration: users, roles and ACL editing. The rules live
//! here (who may see and change which account, what may be granted); the
//! handlers in `routes/{users,roles,acls}/` only extract, call and answer.
//! Every write runs as a command (`crate::commands`).

pub mod acl_edit;
pub mod roles;
pub mod user_list;
pub mod users;

use stoa_acl::AuthContext;
pub use stoa_acl::foreign_tenant;
use stoa_core::AppError;
use uuid::Uuid;

/// The tenant a request acts in: `requested` when the caller may target it
/// (403 otherwise, `AuthContext::target_tenant`), else the caller's scope
/// tenant (403 when it has none).
pub fn target_tenant(ctx: &AuthContext, requested: Option<Uuid>) -> Result<Uuid, AppError> {
    match requested {
        Some(t) => ctx.target_tenant(t),
        None => ctx.tenant(),
    }
}
