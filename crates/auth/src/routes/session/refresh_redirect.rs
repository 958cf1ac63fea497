//! `GET /auth/session/refresh`: the `session_token` cookie for a fresh
//! `auth_token` cookie, then a redirect.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get};
use stoa_acl::{AUTH_COOKIE, SESSION_COOKIE};
use stoa_core::AppResult;
use stoa_core::rate_limit::{Layers, Quota};

use crate::dto::RefreshRedirectQuery;
use crate::routes::{
    State, auth_cookie, clear_cookie, ip_of, no_store, safe_redirect, session_cookie,
};
use crate::service::session::rotate;

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
    // No caller yet: the lookup spans tenants (an audited bypass, `stoa_core::rls`).
    stoa_core::rls::set_request_scope(stoa_core::rls::bypass_scope("session refresh"));
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
        if let Some((access, next)) = rotate(&state, &raw).await? {
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
