//! The names of the HTTP headers the API reads and exposes: the one source of
//! truth for CORS ([`ALLOWED_HEADERS`], [`EXPOSED_HEADERS`]).
//!
//! Code that reads a request header names it through a constant here (stoa-acl's
//! selection headers, stoa-auth's optimistic lock, the request id), so the CORS
//! configuration cannot miss it: a browser may send cross-origin only the headers
//! a preflight allowed. A module that reads a new header adds a constant and puts
//! it in [`ALLOWED_HEADERS`]; core's test `cors::every_header_read_is_allowed`
//! scans the workspace sources for `x-...` names and fails on one that is in
//! neither list.

/// `Authorization: Bearer <jwt or key>` / `ApiKey <key>`.
pub const AUTHORIZATION: &str = "authorization";
/// The prefix of API-key secrets (`omk_<8 hex>.<48 hex>`, as the reference
/// makes them).
pub const API_KEY_PREFIX: &str = "omk_";

/// Whether a credential value has the shape of an API-key secret. Some clients
/// send keys as `Authorization: Bearer <secret>`; a JWT never starts with `omk_`.
pub fn looks_like_api_key(value: &str) -> bool {
    value.starts_with(API_KEY_PREFIX) && value.contains('.') && value.len() <= 256
}

/// The session token of an `Authorization` value: `Bearer <token>` whose
/// token is not an API key. The authenticator uses this token instead of
/// the session cookie, so a request carrying one is never authenticated by
/// the cookie (`http::origin` relies on it). `Basic`, `ApiKey` and the other
/// schemes are not session tokens.
pub fn bearer_session_token(authorization: &str) -> Option<&str> {
    let (scheme, rest) = authorization
        .trim()
        .split_once(' ')
        .unwrap_or((authorization.trim(), ""));
    let token = rest.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && !looks_like_api_key(token))
        .then_some(token)
}

/// The body's media type (JSON, form, multipart).
pub const CONTENT_TYPE: &str = "content-type";
/// Safelisted by browsers; listed so a preflight naming it passes.
pub const ACCEPT: &str = "accept";
/// Picks the language of translated messages.
pub const ACCEPT_LANGUAGE: &str = "accept-language";
/// An API key secret.
pub const API_KEY: &str = "x-api-key";
/// A client-chosen request id, echoed back and logged.
pub const REQUEST_ID: &str = "x-request-id";
/// The organization the caller works in (`__all__` = all it may see).
pub const SELECTED_ORG: &str = "x-om-selected-org";
/// The tenant a super admin works in.
pub const SELECTED_TENANT: &str = "x-om-selected-tenant";
/// Optimistic locking: the `updatedAt` the client last read; 409 when it changed.
pub const OPTIMISTIC_LOCK: &str = "x-om-ext-optimistic-lock-expected-updated-at";

/// Downloads: the part of the file wanted (`bytes=0-1023`).
pub const RANGE: &str = "range";
/// Downloads: answer 304 when the client's copy (its ETag) is current.
pub const IF_NONE_MATCH: &str = "if-none-match";
/// Downloads: honour `Range` only while the file still has this ETag.
pub const IF_RANGE: &str = "if-range";

/// Marks the AI chat's SSE body as the AI SDK's UI-message stream (`v1`);
/// the SDK's browser client reads it.
pub const AI_UI_MESSAGE_STREAM: &str = "x-vercel-ai-ui-message-stream";

/// Every request header the API reads: a browser may send only these cross-origin.
pub const ALLOWED_HEADERS: [&str; 12] = [
    ACCEPT,
    ACCEPT_LANGUAGE,
    AUTHORIZATION,
    CONTENT_TYPE,
    API_KEY,
    REQUEST_ID,
    SELECTED_ORG,
    SELECTED_TENANT,
    OPTIMISTIC_LOCK,
    RANGE,
    IF_NONE_MATCH,
    IF_RANGE,
];

/// Response headers browser clients read (others stay hidden from cross-origin scripts).
pub const EXPOSED_HEADERS: [&str; 11] = [
    REQUEST_ID,
    crate::command::OPERATION_HEADER,
    "retry-after",
    crate::rate_limit::LIMIT_HEADER,
    crate::rate_limit::REMAINING_HEADER,
    crate::rate_limit::RESET_HEADER,
    "content-disposition",
    "etag",
    "content-range",
    "accept-ranges",
    AI_UI_MESSAGE_STREAM,
];
