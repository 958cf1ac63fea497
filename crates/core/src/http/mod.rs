//! HTTP plumbing shared by the `stoa` server and the test harness: the app
//! builder, request context (request id, tracing, access log, panic guard),
//! metrics, CORS ([`headers`] names every header the API reads), security
//! headers, JSON bodies for every error, the access policy run before every
//! handler ([`access`]), list answers served again from memory
//! ([`read_cache`]), optimistic locking of writes ([`lock`]), and the
//! responses modules stream: server-sent events ([`sse`]) and file downloads
//! ([`download`]), both sent uncompressed.

pub mod access;
mod app;
mod client_ip;
mod compression;
mod doc_rules;
pub mod download;
mod errors;
pub mod headers;
pub mod in_process;
pub mod lock;
mod metrics;
mod origin;
pub mod read_cache;
mod request_context;
mod routes;
pub mod sse;

pub use crate::error::{ErrorEnvelope, ErrorShape};
pub use access::{
    Access, AccessPolicy, AccessPolicyData, BadJson, Method, Operation, access_policy_data,
    enforce_access,
};
pub use app::{ApiConfigurator, AppContext, app, openapi_doc};
pub use client_ip::{TrustedProxyDepth, client_ip};
pub use compression::{no_compression, strip_identity_encoding};
pub use download::{Disposition, Download, SANDBOX_CSP, content_disposition};
pub use errors::{APP_DATA_MISSING, json_error_bodies, not_found};
pub use headers::{ALLOWED_HEADERS, EXPOSED_HEADERS};
pub use in_process::{InProcess, InProcessRequest, InProcessResponse};
pub use metrics::{Metrics, metrics_app};
pub use origin::{
    ALLOWED_METHODS, CREDENTIAL_COOKIES, OriginPolicy, cookie_authenticates, origin_guard,
    origin_of, require_trusted_source,
};
pub use read_cache::{ReadCache, ReadCacheData, read_cache_data};
pub use request_context::{RequestId, request_context};
pub use routes::ServiceConfig;
pub use sse::{Disconnected, Sse, SseEvent, SseKeepAlive, SseSender};

/// Headers sent with every response.
pub fn security_headers() -> actix_web::middleware::DefaultHeaders {
    actix_web::middleware::DefaultHeaders::new()
        .add(("X-Content-Type-Options", "nosniff"))
        .add(("Referrer-Policy", "strict-origin-when-cross-origin"))
        .add(("X-Frame-Options", "DENY"))
}

/// CORS for the configured origins; with none configured, cross-origin browser
/// calls are refused (same-origin clients and non-browser clients are unaffected).
/// Allows every request header the API reads and exposes the response headers
/// clients read. [`origin_guard`] (outside this) answers refused preflights with
/// JSON and keeps `Access-Control-Allow-Credentials` to these origins.
pub fn cors(origins: &[String]) -> actix_cors::Cors {
    let mut cors = actix_cors::Cors::default()
        .allowed_methods(ALLOWED_METHODS)
        .allowed_headers(ALLOWED_HEADERS)
        .expose_headers(EXPOSED_HEADERS)
        .supports_credentials()
        .max_age(600);
    for origin in origins.iter().filter_map(|o| origin_of(o)) {
        cors = cors.allowed_origin(&origin);
    }
    cors
}
