use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use stoa_acl::{AUTH_COOKIE, SESSION_COOKIE};
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};
use utoipa::ToSchema;

use stoa_core::rate_limit::{Layers, Quota};

use super::{State, auth_cookie, clear_cookie, ip_of, no_store, safe_redirect, session_cookie};
use crate::service::{self, Refresh};
use crate::state::AuthState;
use crate::tokens::token_hash;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshRequest {
    pub refresh_token: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshResponse {
    pub ok: bool,
    pub access_token: String,
    /// Seconds until the access token expires.
    pub expires_in: u64,
    /// The next refresh token: each one works once (rotation).
    pub refresh_token: String,
}

/// Rotates a session: a valid refresh token yields a new access token and a new
/// refresh token. Presenting an already-rotated token revokes the session.
async fn rotate(state: &AuthState, raw: &str) -> AppResult<Option<(String, String, bool)>> {
    let mut conn = state.db.conn().await?;
    let raw = raw.to_string();
    let outcome = {
        use diesel_async::AsyncConnection;
        let conn: &mut diesel_async::AsyncPgConnection = &mut conn;
        conn.transaction::<_, diesel::result::Error, _>(async |c| {
            service::rotate_refresh_token(c, &raw).await
        })
        .await?
    };
    match outcome {
        Refresh::Rotated {
            session,
            user,
            token,
        } => {
            let roles = service::role_names(&mut conn, &user).await?;
            let access = state.access_token(&user, session, roles)?;
            Ok(Some((access, token, true)))
        }
        Refresh::Reused => {
            tracing::warn!("refresh token reused after rotation: session revoked");
            Ok(None)
        }
        Refresh::Invalid => Ok(None),
    }
}

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
    let mut quota = None;
    let result = refresh_tokens(&req, &state, &body, &mut quota).await;
    Quota::attach(quota, result).map(no_store)
}

async fn refresh_tokens(
    req: &HttpRequest,
    state: &AuthState,
    body: &[u8],
    quota: &mut Option<Quota>,
) -> AppResult<HttpResponse> {
    const MISSING: &str = "Missing or invalid refresh token";
    let limits = &state.config.rate_limits;
    let ip = ip_of(req, state);
    let by_ip = Layers::new(&*state.limiter).layer(format!("refresh:ip:{ip}"), limits.refresh_ip);
    *quota = by_ip.peek();
    stoa_core::extract::check_json_body(body).map_err(AppError::ok_false)?;
    let parsed: Option<RefreshRequest> = serde_json::from_slice(body).ok();
    let raw = parsed
        .map(|r| r.refresh_token.trim().to_string())
        .filter(|t| !t.is_empty() && t.len() <= 512)
        .ok_or_else(|| AppError::bad_request(MISSING).ok_false())?;
    // A refusal brings its own quota headers: report nothing on top of them.
    *quota = None;
    *quota = Layers::new(&*state.limiter)
        .layer(format!("refresh:ip:{ip}"), limits.refresh_ip)
        .layer(
            format!("refresh:token:{}", token_hash(&raw)),
            limits.refresh_token,
        )
        .reserve()?;
    match rotate(state, &raw).await? {
        Some((access, next, _)) => {
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
        None => Err(AppError::new(
            actix_web::http::StatusCode::UNAUTHORIZED,
            "Invalid or expired refresh token",
        )
        .ok_false()
        .with_header(header::SET_COOKIE, clear_cookie(AUTH_COOKIE).to_string())
        .with_header(header::SET_COOKIE, clear_cookie(SESSION_COOKIE).to_string())),
    }
}

#[derive(Debug, Deserialize, validator::Validate, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RefreshRedirectQuery {
    /// Where to go afterwards: a local path or a URL on the app's origin.
    pub redirect: Option<String>,
}

/// Exchanges the `session_token` cookie for a fresh `auth_token` cookie and
/// redirects; without a valid session, redirects to the login page.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(RefreshRedirectQuery),
    responses((status = 302, description = "Redirect with a fresh auth cookie, or to /login"))
)]
#[get("/auth/session/refresh")]
pub async fn refresh_redirect(
    req: HttpRequest,
    state: State,
    q: stoa_core::Query<RefreshRedirectQuery>,
) -> AppResult<HttpResponse> {
    let ip = ip_of(&req, &state);
    let by_ip = Layers::new(&*state.limiter).layer(
        format!("refresh:ip:{ip}"),
        state.config.rate_limits.refresh_ip,
    );
    let mut quota = by_ip.peek();
    let target = safe_redirect(q.redirect.as_deref(), state.config.app_url.as_deref(), "/");
    let raw = req.cookie(SESSION_COOKIE).map(|c| c.value().to_string());
    if let Some(raw) = raw.filter(|r| !r.is_empty() && r.len() <= 512) {
        quota = by_ip.reserve()?;
        if let Some((access, next, _)) = rotate(&state, &raw).await? {
            let res = HttpResponse::Found()
                .insert_header((header::LOCATION, target))
                .cookie(auth_cookie(&state, &access))
                .cookie(session_cookie(&state, &next, state.config.remember_ttl))
                .finish();
            return Quota::attach(quota, Ok(no_store(res)));
        }
    }
    let login = format!("/login?redirect={}", encode(&target));
    let res = HttpResponse::Found()
        .insert_header((header::LOCATION, login))
        .cookie(clear_cookie(AUTH_COOKIE))
        .cookie(clear_cookie(SESSION_COOKIE))
        .finish();
    Quota::attach(quota, Ok(no_store(res)))
}

/// Percent-encodes a path for use as a query value.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
