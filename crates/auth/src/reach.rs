//! Who can act where after an ACL write: the organization reach of a role or
//! user ACL, judged by its holders, not by the shape of its list.
//!
//! An ACL's `organizations` means (the reference's rule, `crate::acl`):
//! - `null`: every organization of the tenant;
//! - a list of ids: those organizations and their descendants;
//! - `[]`: each holder's own home organization and its descendants (when no
//!   other ACL of the holder lists organizations).
//!
//! `[]` is therefore not "nothing": an empty list passes every "subset of
//! mine" check, yet gives each holder the reach of their home organization.
//! A caller restricted to some organizations may write an ACL only when every
//! holder it then reaches acts inside the caller's organizations. An ACL that
//! grants no feature reaches nothing. Unrestricted callers are not limited.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::{AuthContext, out_of_scope};
use stoa_core::AppError;
use uuid::Uuid;

use crate::commands::UserState;
use crate::schema::{user_roles, users};

fn outside(what: &str) -> AppError {
    out_of_scope(format!("{what} would reach organizations outside yours."))
}

/// Whether a restricted caller's allowed set holds `home` (a holder without a
/// home organization reaches nothing through `[]`).
fn home_inside(allowed: &[Uuid], home: Option<Uuid>) -> bool {
    home.is_none_or(|h| allowed.contains(&h))
}

/// The organizations a restricted caller may reach, when an ACL that grants
/// something is being written (`None`: nothing to check).
fn restriction(ctx: &AuthContext, grants_something: bool) -> Option<&[Uuid]> {
    ctx.organization_restriction().filter(|_| grants_something)
}

/// 403 unless the ACL of role `role` scoped to `organizations` stays inside
/// the caller's organizations for every live holder of the role.
pub async fn role_scope(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    role: Uuid,
    organizations: Option<&[Uuid]>,
    grants_something: bool,
) -> Result<(), AppError> {
    let Some(allowed) = restriction(ctx, grants_something) else {
        return Ok(());
    };
    match organizations {
        None => Err(outside("This role")),
        Some(list) if !list.is_empty() => {
            if list.iter().all(|o| allowed.contains(o)) {
                Ok(())
            } else {
                Err(outside("This role"))
            }
        }
        Some(_) => {
            let homes: Vec<Option<Uuid>> = user_roles::table
                .inner_join(users::table)
                .filter(user_roles::role_id.eq(role))
                .filter(users::deleted_at.is_null())
                .select(users::organization_id)
                .distinct()
                .load(conn)
                .await?;
            if homes.into_iter().all(|h| home_inside(allowed, h)) {
                Ok(())
            } else {
                Err(outside(
                    "This role (an empty list means each holder's home organization)",
                ))
            }
        }
    }
}

/// A role as a record a caller renames, deletes or writes the ACL of (not
/// as something it assigns, which is [`role_scope`]'s business): its
/// organizations are those its ACL reaches. For a restricted caller a role
/// reaching every organization (`null`), or without an ACL, is a
/// tenant-wide record: readable, never changed, whether or not it grants
/// anything yet (`AuthContext::require_writable`, the one rule of tenant
/// resources; 403 `organization_out_of_scope`). A role listing
/// organizations is judged by [`role_scope`] as if it granted something.
/// *Why:* "grants nothing reaches nothing" let an admin of one branch
/// rename or delete a role the tenant's administrator had just made for the
/// whole tenant, or give it an ACL of its own.
pub async fn role_record(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    role: Uuid,
    tenant: Uuid,
    organizations: Option<Option<&[Uuid]>>,
) -> Result<(), AppError> {
    match organizations {
        Some(Some(list)) => role_scope(conn, ctx, role, Some(list), true).await,
        Some(None) | None => ctx.require_writable(Some(tenant), None, || {
            crate::error::AuthError::RoleNotFound.into()
        }),
    }
}

/// 403 unless the ACL override of `user` scoped to `organizations` stays
/// inside the caller's organizations.
pub fn user_scope(
    ctx: &AuthContext,
    user: &UserState,
    organizations: Option<&[Uuid]>,
    grants_something: bool,
) -> Result<(), AppError> {
    let Some(allowed) = restriction(ctx, grants_something) else {
        return Ok(());
    };
    let inside = match organizations {
        None => false,
        Some([]) => home_inside(allowed, user.organization_id),
        Some(list) => list.iter().all(|o| allowed.contains(o)),
    };
    if inside {
        Ok(())
    } else {
        Err(outside("This access"))
    }
}
