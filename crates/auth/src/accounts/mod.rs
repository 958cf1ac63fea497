//! Account administration: users, roles and ACL editing. The rules live
//! here (who may see and change which account, what may be granted); the
//! handlers in `routes/{users,roles,acls}.rs` only extract, call and answer.
//! Every write runs as a command (`crate::commands`).

pub mod acl_edit;
pub mod roles;
pub mod user_list;
pub mod users;

use actix_web::http::StatusCode;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use uuid::Uuid;

/// The dispatcher's answer to a non-super admin naming another tenant.
pub fn foreign_tenant() -> AppError {
    AppError::new(
        StatusCode::FORBIDDEN,
        "Not authorized to target this tenant.",
    )
}

/// The tenant a request acts in: `requested` when the caller may target it
/// (403 otherwise), else the caller's scope tenant (403 when it has none).
pub fn target_tenant(ctx: &AuthContext, requested: Option<Uuid>) -> Result<Uuid, AppError> {
    match requested {
        Some(t) if ctx.may_target_tenant(t) => Ok(t),
        Some(_) => Err(foreign_tenant()),
        None => ctx.tenant(),
    }
}
