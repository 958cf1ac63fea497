//! Thin handlers, one per file: extract, rate-limit, call the service,
//! answer. Each area is a folder (`login/`, `session/`, `profile/`, `reset/`,
//! `locale/`, `features/`, `users/`, `roles/`, `acls/`) with one file per
//! handler; `invite.rs` is the one invitation endpoint. Shared here: cookies,
//! redirects and form parsing.

pub mod acls;
pub mod features;
pub mod invite;
pub mod locale;
pub mod login;
pub mod profile;
pub mod read_log;
pub mod reset;
pub mod roles;
pub mod session;
pub mod users;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::{HttpRequest, HttpResponse, web};
use serde::de::DeserializeOwned;
use stoa_acl::{AUTH_COOKIE, SESSION_COOKIE};
use stoa_core::http::{TrustedProxyDepth, client_ip};
use stoa_core::rate_limit::Quota;
use stoa_core::{AppError, AppResult};

use crate::error::AuthError;
use crate::state::AuthState;

/// The auth state registered as app data.
pub type State = web::Data<AuthState>;

/// The `auth_token` cookie carrying an access token.
pub fn auth_cookie(state: &AuthState, token: &str) -> Cookie<'static> {
    Cookie::build(AUTH_COOKIE, token.to_string())
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(state.config.secure_cookies)
        .max_age(secs(state.config.access_ttl))
        .finish()
}

/// The `session_token` cookie carrying the refresh token.
pub fn session_cookie(state: &AuthState, token: &str, ttl: std::time::Duration) -> Cookie<'static> {
    Cookie::build(SESSION_COOKIE, token.to_string())
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(state.config.secure_cookies)
        .max_age(secs(ttl))
        .finish()
}

/// Marks a response that carries a token or a secret (body or cookie) as not
/// to be stored by browsers or proxies.
pub fn no_store(mut res: actix_web::HttpResponse) -> actix_web::HttpResponse {
    res.headers_mut().insert(
        actix_web::http::header::CACHE_CONTROL,
        actix_web::http::header::HeaderValue::from_static("no-store"),
    );
    res
}

/// A cookie that deletes `name`.
pub fn clear_cookie(name: &'static str) -> Cookie<'static> {
    let mut cookie = Cookie::build(name, "")
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .finish();
    cookie.make_removal();
    cookie
}

fn secs(d: std::time::Duration) -> actix_web::cookie::time::Duration {
    actix_web::cookie::time::Duration::seconds(i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A same-site path to redirect to: must start with a single `/`, with no
/// backslashes or control characters (which browsers may read as another
/// host); an absolute URL on the app's own origin is reduced to its path.
/// Anything else gives `default`.
pub fn safe_redirect(raw: Option<&str>, app_url: Option<&str>, default: &str) -> String {
    let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
        return default.to_string();
    };
    let path = match app_url {
        Some(origin) if raw.starts_with(origin) => {
            let rest = &raw[origin.len()..];
            if rest.is_empty() { "/" } else { rest }
        }
        _ => raw,
    };
    let safe = path.starts_with('/')
        && !path.starts_with("//")
        && !path.contains('\\')
        && !path.chars().any(|c| c.is_control())
        && path.len() <= 2048;
    if safe {
        path.to_string()
    } else {
        default.to_string()
    }
}

/// Runs `route` with the rate-limit quota it reserves (`None` until it
/// does): whatever it answers, success or error, carries the quota headers.
pub async fn with_quota(
    quota: Option<Quota>,
    route: impl AsyncFnOnce(&mut Option<Quota>) -> AppResult<HttpResponse>,
) -> AppResult<HttpResponse> {
    let mut quota = quota;
    let result = route(&mut quota).await;
    Quota::attach(quota, result)
}

/// [`with_quota`] for a route with no caller yet (sign-in, session
/// refresh, password reset): its lookups span tenants, an audited bypass
/// (`stoa_core::rls`, logged with `reason`).
pub async fn without_caller(
    reason: &'static str,
    route: impl AsyncFnOnce(&mut Option<Quota>) -> AppResult<HttpResponse>,
) -> AppResult<HttpResponse> {
    stoa_core::rls::set_request_scope(stoa_core::rls::bypass_scope(reason));
    with_quota(None, route).await
}

/// The client address for rate-limit keys (the peer unless proxies are trusted).
pub fn ip_of(req: &HttpRequest, state: &AuthState) -> String {
    client_ip(
        req,
        TrustedProxyDepth(state.config.rate_limits.trust_proxy_depth),
    )
    .unwrap_or_else(|| "unknown".into())
}

/// Parses a form body (`application/x-www-form-urlencoded`); anything else,
/// including JSON, is refused with the endpoint's `{ok:false,error}` error.
/// Control characters (but tab/LF/CR) are refused with a 400 naming the field.
pub fn parse_form<T: DeserializeOwned>(
    req: &HttpRequest,
    body: &[u8],
    error: AuthError,
) -> Result<T, AppError> {
    let content_type = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !content_type.starts_with("application/x-www-form-urlencoded") {
        return Err(error.into());
    }
    stoa_core::extract::check_form_body(body).map_err(|e| e.ok_false())?;
    serde_html_form::from_bytes(body).map_err(|_| error.into())
}

#[cfg(test)]
mod tests {
    use super::safe_redirect;

    #[test]
    fn redirects_stay_local() {
        let app = Some("https://app.example.com");
        assert_eq!(
            safe_redirect(Some("/backend/x?y=1"), app, "/"),
            "/backend/x?y=1"
        );
        assert_eq!(safe_redirect(Some("https://evil.com/"), app, "/"), "/");
        assert_eq!(safe_redirect(Some("//evil.com"), app, "/"), "/");
        assert_eq!(safe_redirect(Some("/\\evil.com"), app, "/"), "/");
        assert_eq!(safe_redirect(Some("javascript:alert(1)"), app, "/"), "/");
        assert_eq!(
            safe_redirect(Some("https://app.example.com/deals"), app, "/"),
            "/deals"
        );
        assert_eq!(
            safe_redirect(Some("https://app.example.com.evil.com/"), app, "/"),
            "/"
        );
        assert_eq!(safe_redirect(None, app, "/backend"), "/backend");
    }
}
