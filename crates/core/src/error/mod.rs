//! The error vocabulary of the API.
//!
//! Every failure becomes an [`AppError`]: a status, a human-readable message, an
//! optional typed `code`, optional extra body fields and the body form. Bodies are
//! `{"error": "..."}` (plus `"code"` for typed errors, plus any extra fields), or
//! `{"ok": false, "error": "..."}` on the authentication endpoints that carry `ok`.
//!
//! Module crates keep their own `thiserror` enums and implement [`ApiError`] for
//! them; `From<E: ApiError>` is not blanket (coherence), so each module writes a
//! one-line `impl From<ModError> for AppError { fn from(e) { AppError::from_api(e) } }`.
//! Internal failures answer 500 `{"error":"Internal server error"}` and are logged
//! once, inside the request's tracing span (which carries the request id); database
//! text never reaches the client.

mod body;
mod db;
mod shape;

use std::borrow::Cow;
use std::fmt;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use serde_json::{Map, Value};

pub use body::{BulkErrorBody, ErrorBody, Issue, flatten};
pub use shape::{ErrorEnvelope, ErrorShape};

/// A domain error that knows its HTTP status and, optionally, its typed code.
pub trait ApiError: std::error::Error {
    fn status(&self) -> StatusCode;
    fn code(&self) -> Option<&'static str> {
        None
    }
}

/// How the error body is shaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyForm {
    /// `{"error": "..."}`
    Plain,
    /// `{"ok": false, "error": "..."}` (authentication endpoints)
    OkFalse,
}

/// The error every handler returns. Kept small (the rarely used parts are
/// boxed) because every fallible handler step returns it.
#[derive(Debug)]
pub struct AppError {
    status: StatusCode,
    form: BodyForm,
    message: Cow<'static, str>,
    details: Box<Details>,
}

#[derive(Debug, Default)]
struct Details {
    code: Option<Cow<'static, str>>,
    extra: Map<String, Value>,
    retry_after: Option<u64>,
    /// Extra response headers (e.g. a `Set-Cookie` that clears a stale cookie).
    headers: Vec<(header::HeaderName, String)>,
    /// The internal cause of a 5xx, logged and never sent.
    cause: Option<String>,
    /// Input problems, rendered in the route's [`ErrorShape`].
    issues: Option<Vec<Issue>>,
}

pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    pub fn new(status: StatusCode, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            status,
            form: BodyForm::Plain,
            message: message.into(),
            details: Box::default(),
        }
    }

    pub fn bad_request(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn unauthorized() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "Unauthorized")
    }
    pub fn forbidden() -> Self {
        Self::new(StatusCode::FORBIDDEN, "Forbidden")
    }
    pub fn not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }
    pub fn conflict(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }
    pub fn unprocessable(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }
    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Request body is larger than the limit of {limit} bytes"),
        )
    }
    pub fn too_many_requests(retry_after_secs: u64) -> Self {
        let mut err = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many requests. Please try again later.",
        );
        err.details.retry_after = Some(retry_after_secs.max(1));
        err
    }
    pub fn service_unavailable(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, message)
    }

    /// A server-side failure: the cause is logged, the client sees a generic 500.
    pub fn internal(cause: impl fmt::Display) -> Self {
        let mut err = Self::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error");
        err.details.cause = Some(cause.to_string());
        err
    }

    /// Converts a module's domain error.
    pub fn from_api<E: ApiError>(err: E) -> Self {
        let status = err.status();
        if status.is_server_error() {
            // The log gets the whole chain of causes; the client the
            // error's own message (5xx other than 500) or a generic one.
            let mut cause = err.to_string();
            let mut source = err.source();
            while let Some(inner) = source {
                cause.push_str(": ");
                cause.push_str(&inner.to_string());
                source = inner.source();
            }
            let mut out = Self::internal(cause);
            out.status = status;
            if status != StatusCode::INTERNAL_SERVER_ERROR {
                out.message = Cow::Owned(err.to_string());
            }
            out.details.code = err.code().map(Cow::Borrowed);
            return out;
        }
        let mut out = Self::new(status, err.to_string());
        out.details.code = err.code().map(Cow::Borrowed);
        out
    }

    /// Adds a typed `code` to the body.
    pub fn with_code(mut self, code: impl Into<Cow<'static, str>>) -> Self {
        self.details.code = Some(code.into());
        self
    }

    /// Adds an extra top-level field to the body (e.g. `requiredFeatures`).
    pub fn with_field(mut self, key: &str, value: impl Serialize) -> Self {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        self.details.extra.insert(key.to_string(), value);
        self
    }

    /// Adds input problems as `issues`, and the same problems as
    /// `details: {formErrors, fieldErrors}` (zod's `flatten()`, which Open
    /// Mercato's clients map onto form fields).
    /// Rendered in the shape the matched route declares ([`ErrorShape`]);
    /// this default when no route declared one.
    pub fn with_issues(mut self, issues: Vec<Issue>) -> Self {
        self.details.issues = Some(issues);
        self
    }

    /// Adds `envelope`'s keys (see [`ErrorEnvelope`]), keeping fields already set.
    pub fn in_envelope(mut self, envelope: ErrorEnvelope) -> Self {
        let mut keys = Map::new();
        keys.insert("error".into(), Value::String(self.message.to_string()));
        envelope.apply(&mut keys);
        keys.remove("error");
        for (key, value) in keys {
            self.details.extra.entry(key).or_insert(value);
        }
        self
    }

    /// The input problems, when this is an input error.
    pub fn issues(&self) -> Option<&[Issue]> {
        self.details.issues.as_deref()
    }

    /// Adds a response header (appended, so several `Set-Cookie` lines work).
    pub fn with_header(mut self, name: header::HeaderName, value: impl Into<String>) -> Self {
        self.details.headers.push((name, value.into()));
        self
    }

    /// Uses the `{ok:false, error}` body of the authentication endpoints.
    pub fn ok_false(mut self) -> Self {
        self.form = BodyForm::OkFalse;
        self
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    pub fn code(&self) -> Option<&str> {
        self.details.code.as_deref()
    }

    /// The JSON body this error renders to (input errors in the default shape).
    pub fn body(&self) -> Value {
        self.body_in(ErrorShape::default())
    }

    /// The JSON body in `shape` (which only changes input errors).
    pub fn body_in(&self, shape: ErrorShape) -> Value {
        let mut body = Map::new();
        if self.form == BodyForm::OkFalse {
            body.insert("ok".into(), Value::Bool(false));
        }
        body.insert("error".into(), Value::String(self.message.to_string()));
        if let Some(code) = &self.details.code {
            body.insert("code".into(), Value::String(code.to_string()));
        }
        for (k, v) in &self.details.extra {
            body.insert(k.clone(), v.clone());
        }
        if let Some(issues) = &self.details.issues {
            shape.render(&self.message, issues, &mut body);
        }
        Value::Object(body)
    }

    /// The response in `shape` (a D input error answers 422).
    pub fn response_in(&self, shape: ErrorShape) -> HttpResponse {
        self.response_with(shape, None)
    }

    /// The response in `shape`, inside `envelope` when one is declared.
    pub fn response_with(
        &self,
        shape: ErrorShape,
        envelope: Option<ErrorEnvelope>,
    ) -> HttpResponse {
        let status = match self.details.issues {
            Some(_) => shape.status(self.status),
            None => self.status,
        };
        let mut body = self.body_in(shape);
        if let (Some(envelope), Value::Object(map)) = (envelope, &mut body) {
            envelope.apply(map);
        }
        self.build(status).json(body)
    }

    fn build(&self, status: StatusCode) -> actix_web::HttpResponseBuilder {
        if let Some(cause) = &self.details.cause {
            tracing::error!(error.cause = %cause, http.status = status.as_u16(), "request failed");
        }
        let mut res = HttpResponse::build(status);
        if let Some(secs) = self.details.retry_after {
            res.insert_header((header::RETRY_AFTER, HeaderValue::from(secs)));
            if status == StatusCode::TOO_MANY_REQUESTS {
                // When the limit frees, as Unix seconds (the reference sends
                // it beside `X-RateLimit-Limit` and `-Remaining`).
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                res.insert_header((
                    header::HeaderName::from_static(crate::rate_limit::RESET_HEADER),
                    HeaderValue::from(now.saturating_add(secs)),
                ));
            }
        }
        for (name, value) in &self.details.headers {
            if let Ok(value) = HeaderValue::from_str(value) {
                res.append_header((name.clone(), value));
            }
        }
        res
    }
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

impl ResponseError for AppError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        self.build(self.status).json(self.body())
    }
}

#[cfg(test)]
mod tests;
