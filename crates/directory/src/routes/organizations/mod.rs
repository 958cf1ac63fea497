//! `/directory/organizations`: one handler per file, and the checks the
//! write handlers share.

pub mod create;
pub mod delete;
pub mod list;
pub mod update;

use stoa_acl::AuthContext;
use stoa_core::AppResult;
use uuid::Uuid;

use crate::error::DirectoryError;

const VIEW: &str = "directory.organizations.view";
const MANAGE: &str = "directory.organizations.manage";

/// Restricted callers may only touch organizations inside their allowed set
/// (the shared scope check, with the directory's own error).
fn check_allowed(ctx: &AuthContext, org: Option<Uuid>) -> AppResult<()> {
    if ctx.may_write_organization(org) {
        Ok(())
    } else {
        Err(DirectoryError::OrganizationNotAllowed.into())
    }
}

fn write_tenant(ctx: &AuthContext, requested: Option<Uuid>) -> AppResult<Uuid> {
    ctx.requested_tenant(requested)?
        .ok_or_else(|| DirectoryError::TenantScopeRequired.into())
}
