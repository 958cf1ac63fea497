//! Whose widgets a caller may read and assign: the reach rules of accounts
//! and of the sidebar, asked through the account interfaces
//! (`stoa_acl::accounts`), never by reading auth's tables.
//!
//! - **Roles**: a live role of the caller's tenant (404 otherwise). A
//!   super-admin role (the flag, or the reserved name `superadmin`) does not
//!   exist for anyone but super admins (404, as `GET /auth/roles` hides it).
//!   Writing a role's widgets passes the check the sidebar's role
//!   preferences pass (`stoa_acl::grants::check_role_records`: the caller
//!   holds every feature the role grants, its organizations cover the
//!   role's, and a restricted caller writes only roles of its organizations
//!   — a role reaching every organization is tenant-wide, read-only to it;
//!   403).
//! - **Users**: a live user of the caller's tenant whose home organization
//!   the caller may act in (`AuthContext::may_write_organization`: a caller
//!   restricted to some organizations reaches only users at home there, and
//!   none without a home), and who is not a super admin unless the caller is
//!   one. Anyone else is 404, read and write alike: these are exactly the
//!   users `GET /auth/users` hides from the caller.
//!
//! The same checks run again for the caller of an undo or a redo
//! ([`crate::commands::handlers_with`]).

use diesel_async::AsyncPgConnection;
use stoa_acl::accounts::{Selection, Subject, UserRef};
use stoa_acl::grants::RoleGrant;
use stoa_acl::{AclResolver, AuthContext, RoleDirectory, UserDirectory};
use stoa_core::AppError;

use crate::error::DashboardsError;
use uuid::Uuid;

/// The reserved name of the tenant's super-admin role.
const SUPERADMIN_ROLE: &str = "superadmin";

pub fn role_not_found() -> AppError {
    DashboardsError::RoleNotFound.into()
}

pub fn user_not_found() -> AppError {
    DashboardsError::UserNotFound.into()
}

/// The live role `role` of `tenant` as the caller may see it, with what it
/// grants: 404 when it is another tenant's, unknown, deleted, or a
/// super-admin role and the caller is not a super admin.
pub async fn visible_role(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    ctx: &AuthContext,
    role: Uuid,
    tenant: Uuid,
) -> Result<RoleGrant, AppError> {
    let mut found = roles
        .role_grants(conn, &[role])
        .await?
        .into_iter()
        .find(|r| r.id == role && r.tenant_id == tenant)
        .ok_or_else(role_not_found)?;
    // The reserved name counts like the flag (auth treats it so).
    found.is_super_admin |= found.name == SUPERADMIN_ROLE;
    if found.is_super_admin && !ctx.is_super_admin() {
        return Err(role_not_found());
    }
    Ok(found)
}

/// [`visible_role`], then the sidebar's grant boundary for writing it.
pub async fn writable_role(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    ctx: &AuthContext,
    role: Uuid,
    tenant: Uuid,
) -> Result<RoleGrant, AppError> {
    let grant = visible_role(conn, roles, ctx, role, tenant).await?;
    stoa_acl::grants::check_role_records(ctx, std::slice::from_ref(&grant))?;
    Ok(grant)
}

/// The live user `user` of `tenant` when the caller reaches it (see the
/// module's rules), else 404.
pub async fn reachable_user(
    conn: &mut AsyncPgConnection,
    users: &dyn UserDirectory,
    acl: &dyn AclResolver,
    ctx: &AuthContext,
    user: Uuid,
    tenant: Uuid,
) -> Result<UserRef, AppError> {
    let found = users
        .user(conn, user)
        .await?
        .filter(|u| u.tenant_id == Some(tenant))
        .ok_or_else(user_not_found)?;
    if ctx.is_super_admin() {
        return Ok(found);
    }
    if !ctx.may_write_organization(found.organization_id) {
        return Err(user_not_found());
    }
    let subject = Subject {
        user_id: found.id,
        tenant_id: found.tenant_id,
        home_organization_id: found.organization_id,
    };
    // The flag does not depend on the organization: resolve in the user's
    // own tenant with no selection.
    let resolved = acl
        .resolve_user(conn, subject, &Selection::default())
        .await?;
    if resolved.acl.is_super_admin {
        return Err(user_not_found());
    }
    Ok(found)
}
