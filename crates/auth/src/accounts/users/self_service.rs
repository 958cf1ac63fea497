//! One's own e-mail and password through the administration route
//! (`PUT /auth/users` on one's own id): the same proof as `PUT /auth/profile`.
//! *Why:* a stolen session of an administrator must not take over the
//! account by changing its e-mail or password without knowing the password.

use stoa_acl::AuthContext;
use stoa_core::AppError;

use crate::error::AuthError;
use crate::limits;
use crate::password::{MAX_PASSWORD_LEN, verify_password};
use crate::queries::{self, normalize_email};
use crate::state::AuthState;

fn invalid(detail: &'static str) -> AppError {
    AuthError::invalid(detail, "currentPassword", detail).into()
}

/// `Ok` when the caller changes neither its e-mail nor its password, or
/// proves it knows the current password (`currentPassword`). Wrong passwords
/// count against the profile's per-user limit (429 past it).
pub async fn confirm(
    state: &AuthState,
    ctx: &AuthContext,
    email: Option<&str>,
    password_given: bool,
    current_password: Option<String>,
) -> Result<(), AppError> {
    let user_id = ctx.user_id.ok_or(AuthError::UserNotFound)?;
    let own = ctx.email.as_deref().map(normalize_email);
    let email_changes = email.is_some_and(|e| Some(e) != own.as_deref());
    if !email_changes && !password_given {
        return Ok(());
    }
    let Some(current) = current_password.filter(|p| !p.is_empty()) else {
        return Err(invalid(
            "The current password is required to change your own e-mail or password.",
        ));
    };
    if current.len() > MAX_PASSWORD_LEN {
        return Err(invalid("Current password is incorrect."));
    }
    let hash = {
        let mut conn = state.db.conn().await?;
        queries::user_by_id(&mut conn, user_id)
            .await?
            .ok_or(AuthError::UserNotFound)?
            .password_hash
    };
    // Counted before the verification, given back when it succeeds, as in
    // the profile: a burst of guesses cannot overtake the count.
    let attempts = limits::current_password(state, user_id);
    attempts.reserve()?;
    if !verify_password(current, hash).await? {
        return Err(invalid("Current password is incorrect."));
    }
    attempts.release();
    Ok(())
}
