//! Who may write a user, role or ACL state back: the checks of the forward
//! commands (`accounts/*`), applied by undo and redo to the state they are
//! about to write, for the caller of the undo, now.
//!
//! Each check looks at both the current state and the target state: an undo
//! must neither reach a record the caller could not change today nor produce
//! one it could not create today.

use diesel_async::AsyncPgConnection;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use uuid::Uuid;

use super::state::{AclState, RoleState, UserState};
use crate::accounts::foreign_tenant;
use crate::error::AuthError;
use crate::{grants, reach};

fn same_tenant(ctx: &AuthContext, tenant: Option<Uuid>) -> Result<(), AppError> {
    match tenant {
        Some(t) => ctx.target_tenant(t).map(|_| ()),
        None if ctx.is_super_admin() => Ok(()),
        None => Err(foreign_tenant()),
    }
}

/// Whether `user` in this state is a super admin (override flag or a role
/// carrying it).
async fn holds_super_admin(
    conn: &mut AsyncPgConnection,
    user: &UserState,
) -> Result<bool, AppError> {
    if user.acl.as_ref().is_some_and(|a| a.is_super_admin) {
        return Ok(true);
    }
    crate::acl::any_super_admin_role(conn, &user.role_ids).await
}

/// A user the caller may change: same tenant, not a super admin (unless the
/// caller is one), home organization inside the caller's scope.
async fn user_in_reach(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    user: &UserState,
) -> Result<(), AppError> {
    same_tenant(ctx, user.tenant_id)?;
    if !ctx.is_super_admin() && holds_super_admin(conn, user).await? {
        return Err(AuthError::SuperAdminAccount.into());
    }
    ctx.require_organizations([user.organization_id])
}

/// A role the caller may change: same tenant, not a super-admin role (unless
/// the caller is one), and for a restricted caller a reach inside its own
/// organizations for every holder; a tenant-wide role (reaching every
/// organization) is read-only to it (`crate::reach::role_record`).
async fn role_in_reach(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    role: &RoleState,
) -> Result<(), AppError> {
    same_tenant(ctx, Some(role.tenant_id))?;
    let acl = role.acl.as_ref();
    let super_role =
        role.name == crate::accounts::roles::SUPERADMIN || acl.is_some_and(|a| a.is_super_admin);
    if super_role && !ctx.is_super_admin() {
        return Err(AuthError::SuperAdminRole.into());
    }
    reach::role_record(
        conn,
        ctx,
        role.id,
        role.tenant_id,
        acl.map(|a| a.organizations.as_deref()),
    )
    .await
}

/// The grant boundary for an ACL going from `current` to `target`: added
/// features must be held by the caller, the super-admin flag granted only by
/// super admins. The organization reach of both states is checked by the
/// callers, every time (not only when the list changes): an undo must not
/// re-apply a scope the caller could not write today.
fn acl_change(
    ctx: &AuthContext,
    current: Option<&AclState>,
    target: Option<&AclState>,
) -> Result<(), AppError> {
    let Some(target) = target else {
        return Ok(());
    };
    let held: &[String] = current.map(|c| &c.features[..]).unwrap_or(&[]);
    let added: Vec<&String> = target
        .features
        .iter()
        .filter(|f| !held.contains(f))
        .collect();
    let was_super = current.is_some_and(|c| c.is_super_admin);
    grants::check_features(ctx, &added, target.is_super_admin && !was_super)
}

/// The reach of a user's ACL override in both states.
fn user_acl_reach(
    ctx: &AuthContext,
    user: &UserState,
    acls: [Option<&AclState>; 2],
) -> Result<(), AppError> {
    for acl in acls.into_iter().flatten() {
        reach::user_scope(
            ctx,
            user,
            acl.organizations.as_deref(),
            !acl.features.is_empty(),
        )?;
    }
    Ok(())
}

pub(super) async fn user(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    current: Option<&UserState>,
    target: Option<&UserState>,
) -> Result<(), AppError> {
    let live = |s: Option<&UserState>| s.is_some_and(|s| !s.deleted);
    ctx.require(match (live(current), live(target)) {
        (false, true) => "auth.users.create",
        (true, false) => "auth.users.delete",
        _ => "auth.users.edit",
    })?;
    for state in [current, target].into_iter().flatten() {
        user_in_reach(conn, ctx, state).await?;
    }
    let Some(target) = target else {
        return Ok(());
    };
    // The override is written back only when it differs; then both of its
    // states must be within the caller's reach (the user's home is, above).
    let current_acl = current.and_then(|c| c.acl.as_ref());
    if current_acl != target.acl.as_ref() {
        user_acl_reach(ctx, target, [current_acl, target.acl.as_ref()])?;
    }
    let held: &[Uuid] = current.map(|c| &c.role_ids[..]).unwrap_or(&[]);
    let added: Vec<Uuid> = target
        .role_ids
        .iter()
        .filter(|r| !held.contains(r))
        .copied()
        .collect();
    let roles = grants::role_grants(conn, &added).await?;
    if roles.iter().any(|r| Some(r.tenant_id) != target.tenant_id) {
        return Err(foreign_tenant());
    }
    grants::check_roles(ctx, &roles)?;
    acl_change(
        ctx,
        current.and_then(|c| c.acl.as_ref()),
        target.acl.as_ref(),
    )
}

pub(super) async fn role(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    current: Option<&RoleState>,
    target: Option<&RoleState>,
) -> Result<(), AppError> {
    ctx.require("auth.roles.manage")?;
    for state in [current, target].into_iter().flatten() {
        role_in_reach(conn, ctx, state).await?;
    }
    acl_change(
        ctx,
        current.and_then(|c| c.acl.as_ref()),
        target.and_then(|t| t.acl.as_ref()),
    )
}

/// An ACL edit of role `role_id` (the role as it is now): the role and both
/// ACL states within the caller's reach.
pub(super) async fn role_acl(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    role_id: Uuid,
    current: Option<&AclState>,
    target: Option<&AclState>,
) -> Result<(), AppError> {
    ctx.require("auth.acl.manage")?;
    let role = RoleState::load(conn, role_id)
        .await?
        .filter(|r| !r.deleted)
        .ok_or(AuthError::RoleNotFound)?;
    role_in_reach(conn, ctx, &role).await?;
    for acl in [current, target].into_iter().flatten() {
        reach::role_scope(
            conn,
            ctx,
            role_id,
            acl.organizations.as_deref(),
            !acl.features.is_empty(),
        )
        .await?;
    }
    acl_change(ctx, current, target)
}

/// An ACL-override edit of user `user_id` (the user as they are now): the
/// user and both ACL states within the caller's reach.
pub(super) async fn user_acl(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    user_id: Uuid,
    current: Option<&AclState>,
    target: Option<&AclState>,
) -> Result<(), AppError> {
    ctx.require("auth.acl.manage")?;
    let user = UserState::load(conn, user_id)
        .await?
        .filter(|u| !u.deleted)
        .ok_or(AuthError::UserNotFound)?;
    user_in_reach(conn, ctx, &user).await?;
    user_acl_reach(ctx, &user, [current, target])?;
    acl_change(ctx, current, target)
}

/// Keeps the super-admin flag of `current` in `target` (never written back);
/// a flag with nothing to keep it from is cleared. Returns whether it differed.
pub(super) fn keep_super_admin_flag(
    target: Option<&mut AclState>,
    current: Option<&AclState>,
) -> bool {
    let Some(target) = target else {
        return false;
    };
    let kept = current.is_some_and(|c| c.is_super_admin);
    let differed = target.is_super_admin != kept;
    target.is_super_admin = kept;
    differed
}

/// `Tracked::keep_protected` of a state whose only protected field is its
/// ACL's super-admin flag (roles and ACL edits).
pub(super) fn keep_flag_only(
    target: Option<&mut AclState>,
    current: Option<&AclState>,
) -> Vec<&'static str> {
    if keep_super_admin_flag(target, current) {
        vec!["isSuperAdmin"]
    } else {
        Vec::new()
    }
}
