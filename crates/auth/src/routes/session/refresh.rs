//! `POST /auth/session/refresh`: a refresh token for new tokens.

use actix_web::{HttpRequest, HttpResponse, post, web};
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;
use stoa_core::rate_limit::{Layers, Quota};

use crate::dto::{RefreshRequest, RefreshResponse};
use crate::error::AuthError;
use crate::routes::without_caller;
use crate::routes::{State, auth_cookie, ip_of, no_store, session_cookie};
use crate::service::session::rotate;
use crate::state::AuthState;
use crate::tokens::token_hash;

/// Exchanges a refresh token for a new access token (and a new refresh token).
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = RefreshRequest,
    responses(
        (status = 200, body = RefreshResponse),
        (status = 400, body = ErrorBody, description = "`{ok:false,error}`: missing refresh token"),
        (status = 401, body = ErrorBody, description = "`{ok:false,error}`: invalid or expired"),
        (status = 429, body = ErrorBody),
    )
)]
#[post("/auth/session/refresh")]
pub async fn refresh(req: HttpRequest, state: State, body: web::Bytes) -> AppResult<HttpResponse> {
    without_caller("session refresh", async |quota| {
        refresh_tokens(&req, &state, &body, quota).await
    })
    .await
    .map(no_store)
}

async fn refresh_tokens(
    req: &HttpRequest,
    state: &AuthState,
    body: &[u8],
    quota: &mut Option<Quota>,
) -> AppResult<HttpResponse> {
    let limits = &state.config.rate_limits;
    let ip = ip_of(req, state);
    let by_ip = Layers::new(&*state.limiter).layer(format!("refresh:ip:{ip}"), limits.refresh_ip);
    *quota = by_ip.peek();
    stoa_core::extract::check_json_body(body).map_err(|e| e.ok_false())?;
    let parsed: Option<RefreshRequest> = serde_json::from_slice(body).ok();
    let raw = parsed
        .map(|r| r.refresh_token.trim().to_string())
        .filter(|t| !t.is_empty() && t.len() <= 512)
        .ok_or(AuthError::MissingRefreshToken)?;
    // A refusal brings its own quota headers: report nothing on top of them.
    *quota = None;
    *quota = Layers::new(&*state.limiter)
        .layer(format!("refresh:ip:{ip}"), limits.refresh_ip)
        .layer(
            format!("refresh:token:{}", token_hash(&raw)),
            limits.refresh_token,
        )
        .reserve()?;
    let Some((access, next)) = rotate(state, &raw).await? else {
        return Err(AuthError::InvalidRefreshToken.into());
    };
    let ttl = state.config.remember_ttl;
    Ok(HttpResponse::Ok()
        .cookie(auth_cookie(state, &access))
        .cookie(session_cookie(state, &next, ttl))
        .json(RefreshResponse {
            ok: true,
            access_token: access,
            expires_in: state.config.access_ttl.as_secs(),
            refresh_token: next,
        }))
}
