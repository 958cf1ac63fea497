//! HTTP plumbing shared by the `stoa` server and the test harness: the app
//! builder, request context (request id, tracing, access log, panic guard),
//! metrics, CORS, security headers, JSON bodies for every error, and the
//! access policy run before every handler ([`access`]).

pub mod access;
mod app;
mod client_ip;
mod errors;
mod metrics;
mod request_context;

pub use access::{
    Access, AccessPolicy, AccessPolicyData, Method, Operation, access_policy_data, enforce_access,
};
pub use app::{ApiConfigurator, AppContext, app, openapi_doc};
pub use client_ip::{TrustedProxyDepth, client_ip};
pub use errors::{json_error_bodies, not_found};
pub use metrics::{Metrics, metrics_app};
pub use request_context::{RequestId, request_context};

/// Headers sent with every response.
pub fn security_headers() -> actix_web::middleware::DefaultHeaders {
    actix_web::middleware::DefaultHeaders::new()
        .add(("X-Content-Type-Options", "nosniff"))
        .add(("Referrer-Policy", "strict-origin-when-cross-origin"))
        .add(("X-Frame-Options", "DENY"))
}

/// CORS for the configured origins; with none configured, cross-origin browser
/// calls are refused (same-origin clients and non-browser clients are unaffected).
pub fn cors(origins: &[String]) -> actix_cors::Cors {
    let mut cors = actix_cors::Cors::default()
        .allowed_methods(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
        .allowed_headers([
            actix_web::http::header::AUTHORIZATION,
            actix_web::http::header::CONTENT_TYPE,
            actix_web::http::header::ACCEPT,
        ])
        .allowed_header("x-api-key")
        .allowed_header("x-request-id")
        .allowed_header("x-om-selected-org")
        .allowed_header("x-om-selected-tenant")
        .expose_headers(["x-request-id", "x-om-operation"])
        .supports_credentials()
        .max_age(600);
    for origin in origins {
        cors = cors.allowed_origin(origin);
    }
    cors
}
