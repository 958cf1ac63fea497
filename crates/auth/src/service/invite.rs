//! Resending an invitation: who may, and the command.

use stoa_acl::AuthContext;
use stoa_core::{AppError, AppResult};
use uuid::Uuid;

use crate::error::AuthError;
use crate::invite::ResendInvite;
use crate::queries::{self, UserRow};
use crate::state::AuthState;

/// The live user `id` if the caller may see it; 404 otherwise (another
/// tenant, outside a restricted caller's organizations, a super admin for
/// anyone but a super admin), like an unknown id.
pub async fn invitee(state: &AuthState, ctx: &AuthContext, id: Uuid) -> AppResult<UserRow> {
    let mut conn = state.db.conn().await?;
    let tenant = if ctx.is_super_admin() {
        None
    } else {
        Some(ctx.tenant_id.ok_or(AuthError::UserNotFound)?)
    };
    let user = queries::live_user_in(&mut conn, id, tenant)
        .await?
        .ok_or(AuthError::UserNotFound)?;
    if !ctx.is_super_admin() {
        // An organization-restricted caller reaches only users of its organizations.
        if !ctx.may_write_organization(user.organization_id) {
            return Err(AuthError::UserNotFound.into());
        }
        // Super administrators are hidden from everyone else: answering
        // anything but 404 (e.g. 409 "has a password") would reveal them.
        let role_ids = queries::role_ids_of(&mut conn, user.id).await?;
        if crate::acl::is_super_admin(&mut conn, user.id, &role_ids).await? {
            return Err(AuthError::UserNotFound.into());
        }
    }
    Ok(user)
}

/// Runs `auth.users.resend_invite` in its own transaction; returns the raw
/// invitation token.
pub async fn resend(state: &AuthState, ctx: &AuthContext, user: UserRow) -> AppResult<String> {
    let actor = ctx.actor();
    let (token, _) = state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                stoa_core::command::execute(conn, &actor, ResendInvite { user }).await
            })
        })
        .await?;
    Ok(token)
}
