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
//!   session. A cookie-authenticated unsafe request (POST, PUT, PATCH, DELETE
//!   carrying the `auth_token` or `session_token` cookie and neither
//!   `Authorization` nor `x-api-key`) is refused with 403 before any handler runs
//!   when its `Origin` (or, without one, its `Referer`) is not the server's own
//!   origin, a `STOA_CORS_ORIGINS` entry or `APP_URL`'s origin. Requests that
//!   carry neither header (non-browser clients) pass: a browser always sends
//!   `Origin` on a cross-site POST.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::web;

use super::headers::{ALLOWED_HEADERS, API_KEY};
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
        }
    }

    /// Whether `origin` is a CORS origin (`STOA_CORS_ORIGINS`).
    pub fn cors_allows(&self, origin: &str) -> bool {
        origin_of(origin).is_some_and(|o| self.cors.contains(&o))
    }

    /// Whether a cookie-authenticated write may come from `origin`: the server's
    /// own origin (the request's host), a CORS origin or `APP_URL`'s.
    fn trusts(&self, origin: &str, own_host: &str) -> bool {
        let Some(origin) = origin_of(origin) else {
            return false;
        };
        let host = origin.split_once("://").map_or("", |(_, host)| host);
        host.eq_ignore_ascii_case(own_host)
            || self.cors.contains(&origin)
            || self.app.as_deref() == Some(origin.as_str())
    }
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
    Some(format!("{scheme}://{}", authority.to_ascii_lowercase()))
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

fn is_cookie_authenticated_write(req: &ServiceRequest) -> bool {
    let unsafe_method = matches!(
        *req.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    unsafe_method
        && !req.headers().contains_key(header::AUTHORIZATION)
        && !req.headers().contains_key(API_KEY)
        && CREDENTIAL_COOKIES
            .iter()
            .any(|name| req.cookie(name).is_some_and(|c| !c.value().is_empty()))
}

/// Refuses a cookie-authenticated write from an untrusted origin.
fn cross_site_error(req: &ServiceRequest, policy: &OriginPolicy) -> Option<AppError> {
    if !is_cookie_authenticated_write(req) {
        return None;
    }
    let source = header_str(req, &header::ORIGIN).or_else(|| header_str(req, &header::REFERER));
    let source = source?;
    let own_host = req.connection_info().host().to_string();
    if policy.trusts(source, &own_host) {
        return None;
    }
    tracing::warn!(http.origin = %source, "cross-site cookie-authenticated request refused");
    Some(AppError::new(
        StatusCode::FORBIDDEN,
        "Cross-site request refused: this origin may not act with the session cookie",
    ))
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
mod tests {
    use super::*;

    #[test]
    fn origins_are_normalized() {
        assert_eq!(
            origin_of("HTTPS://App.Example.com/reset?x=1").as_deref(),
            Some("https://app.example.com")
        );
        assert_eq!(
            origin_of("http://localhost:3000/").as_deref(),
            Some("http://localhost:3000")
        );
        assert_eq!(origin_of("null"), None);
        assert_eq!(origin_of("file:///etc/passwd"), None);
        assert_eq!(origin_of("https://user@evil.example"), None);
    }

    #[test]
    fn trust_covers_own_host_cors_and_app_url() {
        let policy = OriginPolicy {
            cors: vec!["https://ui.example.com".into()],
            app: Some("https://app.example.com".into()),
        };
        assert!(policy.trusts("https://api.example.com", "api.example.com"));
        assert!(policy.trusts("https://ui.example.com", "api.example.com"));
        assert!(policy.trusts("https://app.example.com/x", "api.example.com"));
        assert!(!policy.trusts("https://evil.example", "api.example.com"));
        assert!(!policy.trusts("null", "api.example.com"));
        assert!(!policy.cors_allows("https://app.example.com"));
    }
}
