//! The rules of users, roles and ACLs beyond the kit's tenant and feature:
//! who may write which state, for a route's write
//! (`stoa_acl::resource::Resource::check`) and for undo and redo
//! (`Tracked::authorize`), the same functions for the caller now.
//!
//! Each check looks at both the current state and the target state: a write
//! must neither reach a record the caller could not change today nor
//! produce one it could not create today.

use diesel_async::AsyncPgConnection;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use uuid::Uuid;

use super::state::{AclState, RoleState, UserState};
use crate::accounts::foreign_tenant;
use crate::error::AuthError;
use crate::{grants, reach};

/// The kit's steps 2–4 for a user: another tenant's user (or, for anyone
/// but a super admin, one without a tenant) does not exist for the caller.
/// The user's organization and privileges are [`user_in_reach`]'s.
pub(super) fn user_writable(ctx: &AuthContext, user: &UserState) -> Result<(), AppError> {
    let reached = match user.tenant_id {
        Some(t) => ctx.may_target_tenant(t),
        None => ctx.is_super_admin(),
    };
    if reached {
        Ok(())
    } else {
        Err(AuthError::UserNotFound.into())
    }
}

/// A role the caller reaches: another tenant's role does not exist for it
/// (404), a super-admin role (the `superadmin` role or one whose ACL
/// carries the flag) is a super admin's alone (403). Its organization
/// reach is [`role_in_reach`]'s (a role has no organization of its own).
fn role_reached(ctx: &AuthContext, role: &RoleState) -> Result<(), AppError> {
    if !ctx.may_target_tenant(role.tenant_id) {
        return Err(AuthError::RoleNotFound.into());
    }
    let super_role = role.name == crate::accounts::roles::SUPERADMIN
        || role.acl.as_ref().is_some_and(|a| a.is_super_admin);
    if super_role && !ctx.is_super_admin() {
        return Err(AuthError::SuperAdminRole.into());
    }
    Ok(())
}

/// The kit's steps 2–4 for a role: [`role_reached`] and
/// `auth.roles.manage`.
pub(super) fn role_writable(ctx: &AuthContext, role: &RoleState) -> Result<(), AppError> {
    role_reached(ctx, role)?;
    ctx.require(super::roles::MANAGE)
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

/// A user the caller may change: not a super admin (unless the caller is
/// one), home organization inside a restricted caller's organizations.
pub async fn user_in_reach(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    user: &UserState,
) -> Result<(), AppError> {
    user_writable(ctx, user)?;
    if ctx.is_super_admin() {
        return Ok(());
    }
    if holds_super_admin(conn, user).await? {
        return Err(AuthError::SuperAdminAccount.into());
    }
    if !ctx.may_write_organization(user.organization_id) {
        return Err(AuthError::UserOutsideOrganizations.into());
    }
    Ok(())
}

/// A role the caller may change ([`role_reached`]), and for a restricted
/// caller a reach inside its own organizations for every holder; a
/// tenant-wide role (reaching every organization) is read-only to it
/// (`crate::reach::role_record`).
pub async fn role_in_reach(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    role: &RoleState,
) -> Result<(), AppError> {
    role_reached(ctx, role)?;
    reach::role_record(
        conn,
        ctx,
        role.id,
        role.tenant_id,
        role.acl.as_ref().map(|a| a.organizations.as_deref()),
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

/// A user going from `current` to `target` (`None`: absent): the feature of
/// the verb, both states in reach, what the target grants within the
/// caller's grant boundary.
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
    let Some(target) = target.filter(|t| !t.deleted) else {
        // Leaving a user (a delete) drops its memberships and override:
        // nothing is granted.
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
    acl_change(ctx, current_acl, target.acl.as_ref())
}

/// A role going from `current` to `target` (`None`: absent).
pub(super) async fn role(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    current: Option<&RoleState>,
    target: Option<&RoleState>,
) -> Result<(), AppError> {
    ctx.require(super::roles::MANAGE)?;
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
/// ACL states within the caller's reach, the grant boundary.
pub(super) async fn role_acl(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    role_id: Uuid,
    current: Option<&AclState>,
    target: Option<&AclState>,
) -> Result<(), AppError> {
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
    acl_change(ctx, current, target)?;
    // A super admin who took the flag off their own role would have no way
    // back (nor, if it was the only one, would anyone else).
    let drops_flag =
        current.is_some_and(|c| c.is_super_admin) && !target.is_some_and(|t| t.is_super_admin);
    if drops_flag && holds_role(conn, ctx, role_id).await? {
        return Err(AuthError::CannotChangeOwnAccess.into());
    }
    Ok(())
}

/// Whether the caller is a member of role `role`.
async fn holds_role(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    role: Uuid,
) -> Result<bool, AppError> {
    Ok(match ctx.user_id {
        Some(user) => crate::queries::role_ids_of(conn, user)
            .await?
            .contains(&role),
        None => false,
    })
}

/// An ACL-override edit of user `user_id` (the user as they are now): the
/// user and both ACL states within the caller's reach, the grant boundary.
pub(super) async fn user_acl(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    user_id: Uuid,
    current: Option<&AclState>,
    target: Option<&AclState>,
) -> Result<(), AppError> {
    let user = UserState::load(conn, user_id)
        .await?
        .filter(|u| !u.deleted)
        .ok_or(AuthError::UserNotFound)?;
    user_in_reach(conn, ctx, &user).await?;
    user_acl_reach(ctx, &user, [current, target])?;
    acl_change(ctx, current, target)?;
    // Past the grant boundary (an escalation stays a 403): one's own
    // override is left to another administrator.
    if ctx.user_id == Some(user_id) {
        return Err(AuthError::CannotChangeOwnAccess.into());
    }
    Ok(())
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
