//! Which browser origins may call the API, and the guard that enforces it.
//!
//! - **CORS** (actix-cors, configured by [`super::cors`]) answers preflights and
//!   adds `Access-Control-Allow-Origin` for `STOA_CORS_ORIGINS`. actix-cors adds
//!   `Access-Control-Allow-Credentials` (and the exposed headers) to every
//!   response, whatever the origin; the guard strips them unless the origin is
//!   allowed, and it answers a refused preflight with a JSON error itself
//!   (actix-cors's own rejection is a text body outside the JSON error handlers).
//! - **Cross-site writes.** Browsers attach cookies to cross-site requests; only
//!   `SameSite=Lax` kept a forged form POST from being executed with the victim's
//!   session. An unsafe request (POST, PUT, PATCH, DELETE) that the session
//!   cookie authenticates is refused with 403 before any handler runs when its
//!   `Origin` (or, without one, its `Referer`) is not the request's own origin,
//!   a `STOA_CORS_ORIGINS` entry or `APP_URL`'s origin. The cookie
//!   authenticates whenever the request carries it (`auth_token` or
//!   `session_token`) and no bearer session token: the authenticator prefers a
//!   valid cookie to an API key, and ignores `Basic` and other schemes, so an
//!   `x-api-key` or a cached `Authorization: Basic` beside the cookie does not
//!   exempt the request. Requests that carry neither header (non-browser
//!   clients) pass: a browser always sends `Origin` on a cross-site POST.
//! - **The own origin** is scheme, host and port as the client addressed
//!   them: the `Host` header and whether the listener is TLS, or, behind
//!   `RATE_LIMIT_TRUST_PROXY_DEPTH` proxies, the `X-Forwarded-Proto` and
//!   `X-Forwarded-Host` entries the outermost trusted proxy wrote. Without a
//!   configured depth those headers are ignored: anyone can send them.
//! - **Sign-in** sets the session cookie, so a forged cross-site login would
//!   sign the victim's browser into the attacker's account. stoa-auth's
//!   login calls [`require_trusted_source`], which refuses an untrusted
//!   `Origin`/`Referer` whatever the body.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderName};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, web};

use super::headers::{ALLOWED_HEADERS, bearer_session_token};
use crate::config::HttpConfig;
use crate::error::AppError;

/// Methods a browser may use cross-origin.
pub const ALLOWED_METHODS: [&str; 6] = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// The cookies that authenticate a browser session (`stoa_acl::AUTH_COOKIE`,
/// `stoa_acl::SESSION_COOKIE`; core cannot depend on stoa-acl).
pub const CREDENTIAL_COOKIES: [&str; 2] = ["auth_token", "session_token"];

/// The configured origins, normalized (`scheme://host[:port]`, lowercase, no
/// trailing slash). Registered as app data by [`super::app`].
#[derive(Clone, Debug, Default)]
pub struct OriginPolicy {
    /// `STOA_CORS_ORIGINS`: may call the API cross-origin, with credentials.
    cors: Vec<String>,
    /// `APP_URL`'s origin: may send cookie-authenticated writes.
    app: Option<String>,
    /// `RATE_LIMIT_TRUST_PROXY_DEPTH`: `X-Forwarded-*` count only behind
    /// this many proxies (0: never).
    proxy_depth: usize,
}

impl OriginPolicy {
    pub fn new(http: &HttpConfig) -> Self {
        Self {
            cors: http
                .cors_origins
                .iter()
                .filter_map(|o| origin_of(o))
                .collect(),
            app: http.app_url.as_deref().and_then(origin_of),
            proxy_depth: http.trust_proxy_depth,
        }
    }

    /// Whether `origin` is a CORS origin (`STOA_CORS_ORIGINS`).
    pub fn cors_allows(&self, origin: &str) -> bool {
        origin_of(origin).is_some_and(|o| self.cors.contains(&o))
    }

    /// Whether a cookie-authenticated write may come from `source` (an
    /// `Origin` or `Referer` value): the request's own origin (`own`, see
    /// [`own_origin`]), a CORS origin or `APP_URL`'s. Scheme, host and port
    /// must all match: `http://host` is not `https://host`.
    fn trusts(&self, source: &str, own: Option<&str>) -> bool {
        let Some(origin) = origin_of(source) else {
            return false;
        };
        own.is_some_and(|own| own == origin)
            || self.cors.contains(&origin)
            || self.app.as_deref() == Some(origin.as_str())
    }

    /// The origin the client addressed: `scheme://host[:port]`, normalized as
    /// [`origin_of`] does. Forwarded headers count only behind a configured
    /// proxy depth; with depth `n` the entry the `n`-th proxy from stoa (the
    /// outermost trusted one) wrote, as for `X-Forwarded-For`.
    fn own_origin(&self, req: &HttpRequest) -> Option<String> {
        let headers = req.headers();
        let forwarded = |name: &str| forwarded_entry(headers, name, self.proxy_depth);
        let scheme = forwarded("x-forwarded-proto").unwrap_or_else(|| {
            let tls = req.uri().scheme_str() == Some("https") || req.app_config().secure();
            if tls { "https" } else { "http" }.to_string()
        });
        let host = forwarded("x-forwarded-host")
            .or_else(|| {
                headers
                    .get(header::HOST)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            })
            .or_else(|| req.uri().authority().map(|a| a.to_string()))
            .unwrap_or_else(|| req.app_config().host().to_string());
        origin_of(&format!("{scheme}://{host}"))
    }
}

/// Entry `len - depth` of a comma-separated forwarded header (the left-most
/// when there are fewer entries); `None` with depth 0 or no such header.
fn forwarded_entry(headers: &HeaderMap, name: &str, depth: usize) -> Option<String> {
    if depth == 0 {
        return None;
    }
    let value = headers.get(name)?.to_str().ok()?;
    let hops: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    hops.get(hops.len().saturating_sub(depth))
        .map(|s| s.to_ascii_lowercase())
}

/// `scheme://host[:port]` of an absolute http(s) URL, lowercased; `None` for
/// anything else (including the opaque origin `null`).
pub fn origin_of(url: &str) -> Option<String> {
    let url = url.trim();
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // Credentials in the authority (`user@host`) never belong to an origin.
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let authority = authority.to_ascii_lowercase();
    // Browsers leave the default port out of `Origin`; a `Host` may carry it.
    let default_port = if scheme == "https" { ":443" } else { ":80" };
    let authority = authority.strip_suffix(default_port).unwrap_or(&authority);
    Some(format!("{scheme}://{authority}"))
}

fn header_str<'a>(req: &'a ServiceRequest, name: &HeaderName) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

fn is_preflight(req: &ServiceRequest) -> bool {
    req.method() == Method::OPTIONS
        && req.headers().contains_key(header::ORIGIN)
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// The JSON error of a preflight actix-cors would refuse (with a text body).
fn preflight_error(req: &ServiceRequest, policy: &OriginPolicy) -> Option<AppError> {
    let origin = header_str(req, &header::ORIGIN).unwrap_or("");
    if !policy.cors_allows(origin) {
        return Some(AppError::new(
            StatusCode::FORBIDDEN,
            "Origin is not allowed to call this API",
        ));
    }
    let method = header_str(req, &header::ACCESS_CONTROL_REQUEST_METHOD).unwrap_or("");
    if !ALLOWED_METHODS.contains(&method) {
        return Some(AppError::bad_request(format!(
            "CORS preflight: method `{method}` is not allowed"
        )));
    }
    let requested = header_str(req, &header::ACCESS_CONTROL_REQUEST_HEADERS).unwrap_or("");
    requested
        .split(',')
        .map(|h| h.trim().to_ascii_lowercase())
        .find(|h| !h.is_empty() && !ALLOWED_HEADERS.contains(&h.as_str()))
        .map(|h| AppError::bad_request(format!("CORS preflight: header `{h}` is not allowed")))
}

/// Whether the session cookie is what authenticates `req`: it carries a
/// credential cookie and no bearer session token, which the authenticator
/// would use instead (stoa-auth's `AuthState::authenticate`). Any other
/// `Authorization` scheme or an API key beside the cookie does not count:
/// the cookie still signs the request in when valid.
pub fn cookie_authenticates(headers: &HeaderMap, has_cookie: bool) -> bool {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_session_token)
        .is_some();
    has_cookie && !bearer
}

fn is_cookie_authenticated_write(req: &ServiceRequest) -> bool {
    let unsafe_method = matches!(
        *req.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    let has_cookie = CREDENTIAL_COOKIES.iter().any(|name| {
        req.cookie(name)
            .is_some_and(|c| !c.value().trim().is_empty())
    });
    unsafe_method && cookie_authenticates(req.headers(), has_cookie)
}

/// `Err(source)` when `req` names an `Origin` (or, without one, a `Referer`)
/// the policy does not trust; `Ok` when it is trusted or names none.
fn check_source<'a>(req: &'a HttpRequest, policy: &OriginPolicy) -> Result<(), &'a str> {
    let header = |name: &HeaderName| req.headers().get(name).and_then(|v| v.to_str().ok());
    let Some(source) = header(&header::ORIGIN).or_else(|| header(&header::REFERER)) else {
        return Ok(());
    };
    if policy.trusts(source, policy.own_origin(req).as_deref()) {
        Ok(())
    } else {
        Err(source)
    }
}

/// Refuses a cookie-authenticated write from an untrusted origin.
fn cross_site_error(req: &ServiceRequest, policy: &OriginPolicy) -> Option<AppError> {
    if !is_cookie_authenticated_write(req) {
        return None;
    }
    let source = check_source(req.request(), policy).err()?;
    tracing::warn!(http.origin = %source, "cross-site cookie-authenticated request refused");
    Some(AppError::new(
        StatusCode::FORBIDDEN,
        "Cross-site request refused: this origin may not act with the session cookie",
    ))
}

/// For routes that set a session (sign-in): `Err(source)` when the request
/// names an `Origin` (or `Referer`) other than the request's own origin, a
/// CORS origin or `APP_URL`'s. Requests naming none pass (non-browser
/// clients). Without a registered [`OriginPolicy`] (a bare test app) only the
/// own origin is trusted.
pub fn require_trusted_source(req: &HttpRequest) -> Result<(), String> {
    let fallback = OriginPolicy::default();
    let policy = req.app_data::<web::Data<OriginPolicy>>();
    let policy = policy.map_or(&fallback, |p| p.get_ref());
    check_source(req, policy).map_err(|source| {
        tracing::warn!(http.origin = %source, "cross-site sign-in refused");
        source.to_string()
    })
}

/// The middleware: refused preflights and cross-site writes answer a JSON error
/// before anything else runs; responses to origins outside `STOA_CORS_ORIGINS`
/// lose the credential and exposure headers actix-cors adds.
pub async fn origin_guard(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(policy) = req.app_data::<web::Data<OriginPolicy>>().cloned() else {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body);
    };
    let refusal = if is_preflight(&req) {
        preflight_error(&req, &policy)
    } else {
        cross_site_error(&req, &policy)
    };
    if let Some(err) = refusal {
        return Ok(req.error_response(err).map_into_boxed_body());
    }
    let allowed = header_str(&req, &header::ORIGIN).is_some_and(|o| policy.cors_allows(o));
    match next.call(req).await {
        Ok(mut res) => {
            if !allowed {
                strip_credentials(res.headers_mut());
            }
            Ok(res.map_into_boxed_body())
        }
        Err(mut err) => {
            if !allowed {
                err.add_response_mapper(|mut res| {
                    strip_credentials(res.headers_mut());
                    res
                });
            }
            Err(err)
        }
    }
}

fn strip_credentials(headers: &mut actix_web::http::header::HeaderMap) {
    headers.remove(header::ACCESS_CONTROL_ALLOW_CREDENTIALS);
    headers.remove(header::ACCESS_CONTROL_EXPOSE_HEADERS);
}

#[cfg(test)]
mod tests;
