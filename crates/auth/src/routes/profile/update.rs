//! `PUT /auth/profile`: the caller's e-mail and password.

use actix_web::{HttpResponse, put, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::rate_limit::Quota;
use stoa_core::{AppError, AppResult};

use crate::commands::UpdateProfileCommand;
use crate::dto::{ProfileUpdate, ProfileUpdated};
use crate::error::AuthError;
use crate::limits;
use crate::password::{MAX_PASSWORD_LEN, hash_password, verify_password};
use crate::queries::{self, normalize_email};
use crate::routes::with_quota;
use crate::routes::{State, auth_cookie, no_store};
use crate::state::AuthState;

const INVALID: &str = "Invalid profile update.";

fn invalid(message: &'static str, path: &'static str, detail: &str) -> AppError {
    AuthError::invalid(message, path, detail).into()
}

/// Changes the caller's e-mail and/or password. Both need the current
/// password (`currentPassword`); wrong ones are rate limited per user. A
/// password change ends the caller's other sessions; an e-mail change is
/// announced to the old address. Answers with a new token.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = ProfileUpdate,
    responses(
        (status = 200, body = ProfileUpdated, description = "Updated; a fresh `auth_token` cookie is set"),
        (status = 400, body = ErrorBody, description = "Invalid update, missing or wrong current password, e-mail in use"),
        (status = 429, body = ErrorBody, description = "Too many wrong current passwords (`Retry-After`)"),
    )
)]
#[put("/auth/profile")]
pub async fn update_profile(
    ctx: AuthContext,
    state: State,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    with_quota(None, async |quota| update(&ctx, &state, &body, quota).await)
        .await
        .map(no_store)
}

/// The checks of the input alone: what is to change, and whether it may.
fn checked(
    ctx: &AuthContext,
    state: &AuthState,
    update: ProfileUpdate,
) -> AppResult<(Option<String>, Option<String>, Option<String>)> {
    let email = update
        .email
        .as_deref()
        .map(normalize_email)
        .filter(|e| !e.is_empty());
    let password = update.password.filter(|p| !p.is_empty());
    let current_password = update.current_password.filter(|p| !p.is_empty());
    if email.is_none() && password.is_none() {
        return Err(invalid(
            INVALID,
            "email",
            "Provide an e-mail or a new password.",
        ));
    }
    if password.is_some() && current_password.is_none() {
        return Err(invalid(
            INVALID,
            "currentPassword",
            "The current password is required to set a new one.",
        ));
    }
    let email_changes = email
        .as_deref()
        .is_some_and(|e| Some(e) != ctx.email.as_deref().map(normalize_email).as_deref());
    if email_changes && current_password.is_none() {
        return Err(invalid(
            INVALID,
            "currentPassword",
            "The current password is required to change the e-mail.",
        ));
    }
    if let Some(email) = &email
        && !queries::valid_email(email)
    {
        return Err(invalid(INVALID, "email", "Invalid e-mail address."));
    }
    if let Some(password) = &password {
        if password.len() > MAX_PASSWORD_LEN {
            return Err(invalid(INVALID, "password", "Password is too long."));
        }
        state
            .config
            .password_policy
            .check(password)
            .map_err(|m| invalid("Password does not meet the requirements.", "password", &m))?;
    }
    Ok((email, password, current_password))
}

async fn update(
    ctx: &AuthContext,
    state: &AuthState,
    body: &[u8],
    quota: &mut Option<Quota>,
) -> AppResult<HttpResponse> {
    stoa_core::extract::check_json_body(body)?;
    let user_id = ctx.user_id.ok_or(AuthError::UserNotFound)?;
    let attempts = limits::current_password(state, user_id);
    *quota = attempts.peek();
    // Wrong types are named by field, under the route's own words (shape C).
    let update: ProfileUpdate = stoa_core::extract::parse_json(body).map_err(|err| {
        let issues = err.issues().map(<[_]>::to_vec).unwrap_or_default();
        AppError::bad_request(INVALID).with_issues(issues)
    })?;
    let (email, password, current_password) = checked(ctx, state, update)?;

    let mut conn = state.db.conn().await?;
    let user = queries::user_by_id(&mut conn, user_id)
        .await?
        .ok_or(AuthError::UserNotFound)?;
    if let Some(current) = current_password {
        if current.len() > MAX_PASSWORD_LEN {
            return Err(wrong_current_password());
        }
        // Reserved before the verification, given back when it succeeds: only
        // wrong passwords count, and a concurrent burst cannot overtake the count.
        match attempts.reserve() {
            Ok(reserved) => *quota = reserved,
            Err(limited) => {
                *quota = None;
                return Err(limited);
            }
        }
        if !verify_password(current, user.password_hash.clone()).await? {
            return Err(wrong_current_password());
        }
        attempts.release();
        *quota = attempts.peek();
    }
    let new_hash = match password {
        Some(password) => Some(hash_password(password).await?),
        None => None,
    };
    if let Some(email) = &email
        && *email != user.email
        && queries::email_taken(&mut conn, user.tenant_id, email, user.id).await?
    {
        return Err(invalid(
            "Email already in use",
            "email",
            "Email already in use",
        ));
    }
    drop(conn);
    let final_email = email.unwrap_or_else(|| user.email.clone());
    let session = ctx.session_id;
    let command = UpdateProfileCommand {
        user: user_id,
        email: final_email.clone(),
        password_hash: new_hash,
        keep_session: session,
    };
    let op = crate::service::profile::save(state, ctx, command, &user.email).await?;
    let mut user = user;
    user.email = final_email.clone();
    let token = state.access_token(&user, session.unwrap_or_default(), ctx.acl.roles.clone())?;
    Ok(stoa_core::command::with_operation(HttpResponse::Ok(), &op)
        .cookie(auth_cookie(state, &token))
        .json(ProfileUpdated {
            ok: true,
            email: final_email,
        }))
}

fn wrong_current_password() -> AppError {
    invalid(
        "Current password is incorrect.",
        "currentPassword",
        "Current password is incorrect.",
    )
}
