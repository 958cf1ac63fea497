//! `POST /auth/reset/confirm`: a new password with a reset or invitation token.

use actix_web::{HttpRequest, HttpResponse, post, web};
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;
use stoa_core::rate_limit::{Layers, Quota};

use crate::dto::{ResetConfirmForm, ResetConfirmed};
use crate::error::AuthError;
use crate::password::{MAX_PASSWORD_LEN, hash_password};
use crate::routes::without_caller;
use crate::routes::{State, ip_of, no_store, parse_form};
use crate::state::AuthState;
use crate::tokens::token_hash;

/// Sets a new password with a reset (or invitation) token; every session of
/// the user ends.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body(content = ResetConfirmForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, body = ResetConfirmed),
        (status = 400, body = ErrorBody, description = "`{ok:false,error}`: invalid token or payload"),
        (status = 429, body = ErrorBody),
    )
)]
#[post("/auth/reset/confirm")]
pub async fn confirm_reset(
    req: HttpRequest,
    state: State,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    without_caller("password reset", async |quota| {
        confirm(&req, &state, &body, quota).await
    })
    .await
    .map(no_store)
}

async fn confirm(
    req: &HttpRequest,
    state: &AuthState,
    body: &[u8],
    quota: &mut Option<Quota>,
) -> AppResult<HttpResponse> {
    let limits = &state.config.rate_limits;
    let ip = ip_of(req, state);
    *quota = Layers::new(&*state.limiter)
        .layer(format!("confirm:ip:{ip}"), limits.confirm_ip)
        .reserve()?;
    let form: ResetConfirmForm = parse_form(req, body, AuthError::InvalidRequest)?;
    let token = form.token.unwrap_or_default().trim().to_string();
    let password = form.password.unwrap_or_default();
    if token.len() < 10
        || token.len() > 512
        || password.is_empty()
        || password.len() > MAX_PASSWORD_LEN
    {
        return Err(AuthError::InvalidRequest.into());
    }
    match Layers::new(&*state.limiter)
        .layer(
            format!("confirm:token:{}", token_hash(&token)),
            limits.confirm_token,
        )
        .reserve()
    {
        Ok(Some(q)) => *quota = quota.map_or(Some(q), |p| Some(p.tighter(q))),
        Ok(None) => {}
        Err(limited) => {
            *quota = None;
            return Err(limited);
        }
    }
    state
        .config
        .password_policy
        .check(&password)
        .map_err(AuthError::PasswordRejected)?;
    let hash = hash_password(password).await?;
    if !crate::service::reset::confirm(state, token, hash).await? {
        return Err(AuthError::InvalidResetToken.into());
    }
    Ok(HttpResponse::Ok().json(ResetConfirmed {
        ok: true,
        redirect: "/login".into(),
    }))
}
