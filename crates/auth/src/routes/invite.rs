//! `POST /auth/users/resend-invite`: a new invitation link for a user who has
//! not chosen a password yet (who may see whom, and the command, are in
//! `service::invite`).

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, post, web};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;
use stoa_core::rate_limit::Quota;
use uuid::Uuid;

use super::State;
use crate::dto::{InviteResent, ResendInviteRequest};
use crate::error::AuthError;
use crate::limits;
use crate::routes::with_quota;
use crate::service::invite;
use crate::state::AuthState;

fn requested_id(body: &[u8]) -> AppResult<Uuid> {
    stoa_core::extract::check_json_body(body)?;
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let id = match value.get("id") {
        None | Some(Value::Null) => Err(AuthError::InvalidInviteId("Required")),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map_err(|_| AuthError::InvalidInviteId("Invalid uuid")),
        Some(_) => Err(AuthError::InvalidInviteId("Expected a uuid string")),
    };
    Ok(id?)
}

/// Invalidates the user's earlier tokens, issues an invitation valid 48 hours
/// and mails `<APP_URL>/reset/<token>` (`auth.users.create`). Limited per
/// invited user (3 per 5 minutes), so an administrator working through a list
/// is never blocked. Users the caller cannot see (another tenant, outside its
/// organizations, super administrators for anyone else) answer 404 like
/// unknown ones.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = ResendInviteRequest,
    responses(
        (status = 200, body = InviteResent),
        (status = 400, body = ErrorBody, description = "Invalid request origin"),
        (status = 404, body = ErrorBody, description = "User not found (or not visible to the caller)"),
        (status = 409, body = ErrorBody, description = "User already has a password"),
        (status = 422, body = ErrorBody, description = "`{error:\"Validation failed\", fieldErrors}` (missing or malformed id)"),
        (status = 429, body = ErrorBody),
        (status = 500, body = ErrorBody, description = "The invitation e-mail origin (APP_URL) is not configured"),
    )
)]
#[post("/auth/users/resend-invite")]
pub async fn resend_invite(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    let quota = limits::resend_invite(&state, None).peek();
    with_quota(quota, async |quota| {
        resend(&req, &ctx, &state, &body, quota).await
    })
    .await
}

async fn resend(
    req: &HttpRequest,
    ctx: &AuthContext,
    state: &AuthState,
    body: &[u8],
    quota: &mut Option<Quota>,
) -> AppResult<HttpResponse> {
    ctx.require("auth.users.create")?;
    let id = requested_id(body)?;
    let attempts = limits::resend_invite(state, Some(id));
    *quota = attempts.peek();
    // Visibility first: a hidden user answers 404 before the limit or the
    // "has a password" check could tell it apart.
    let user = invite::invitee(state, ctx, id).await?;
    match attempts.reserve() {
        Ok(reserved) => *quota = reserved,
        Err(limited) => {
            *quota = None;
            return Err(limited);
        }
    }
    if user.password_hash.is_some() {
        return Err(AuthError::HasPassword.into());
    }
    let Some(app_url) = state.config.app_url.clone() else {
        return Err(AuthError::InviteOriginMissing.into());
    };
    if let Some(origin) = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        && !state.config.allowed_origins.iter().any(|o| o == origin)
    {
        return Err(AuthError::InvalidOrigin.into());
    }
    let email = user.email.clone();
    let token = invite::resend(state, ctx, user).await?;
    let warning = crate::invite::send_invitation(state, &app_url, &email, &token)
        .await
        .map(String::from);
    Ok(HttpResponse::Ok().json(InviteResent { ok: true, warning }))
}
