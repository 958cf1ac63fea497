//! The error shapes of the reference's routes (`validation-errors.md` in the
//! reference notes). Every operation declares the one its clients parse
//! ([`crate::http::Operation::errors`]); the access middleware renders an input
//! error ([`AppError::with_issues`](super::AppError::with_issues)) of the
//! matched route in that shape, whichever extractor or hand-rolled parser
//! raised it. Every shape keeps an `error` key (the reference's H has none:
//! stoa adds it) and, unless it contradicts the shape, the `issues` list.

use serde_json::{Map, Value};

use super::body::{Issue, flatten};

/// How a route's validation failures are rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorShape {
    /// `{error:"Invalid input", details: issues[]}` (the CRUD factory).
    A,
    /// `{error: <message>, details:{formErrors, fieldErrors}}` (zod `flatten()`);
    /// an empty message keeps the error's own.
    B(&'static str),
    /// `{error: <message>, issues}`; an empty message keeps the error's own.
    C(&'static str),
    /// 422 `{error:"Validation failed", fieldErrors:{field:[message]}}`.
    D,
    /// `{error: <message naming each problem>}`.
    E,
    /// `{error:"Validation failed", details: issues[]}`.
    F,
    /// `{error:"Validation failed: <path>: <message>, ..."}`.
    G,
    /// `{ok:false, progressJobId:null, message:"Invalid payload"}` (bulk endpoints).
    H,
    /// `{ok:false, error:"Please check the form and try again.", fieldErrors:{field: message}}`.
    I,
}

impl Default for ErrorShape {
    /// The shape of an operation that declares none: the flattened details of
    /// B with the `issues` of C, which both kinds of reader parse.
    fn default() -> Self {
        Self::B("")
    }
}

impl ErrorShape {
    /// The letter of the reference table (the `x-error-shape` of the OpenAPI document).
    pub fn letter(self) -> &'static str {
        match self {
            Self::A => "A",
            Self::B(_) => "B",
            Self::C(_) => "C",
            Self::D => "D",
            Self::E => "E",
            Self::F => "F",
            Self::G => "G",
            Self::H => "H",
            Self::I => "I",
        }
    }

    /// The status an input error answers with (D is a 422).
    pub fn status(self, status: actix_web::http::StatusCode) -> actix_web::http::StatusCode {
        match self {
            Self::D => actix_web::http::StatusCode::UNPROCESSABLE_ENTITY,
            _ => status,
        }
    }

    /// Writes `error` and the shape's detail keys into `body` for `issues`;
    /// `message` is the error's own text.
    pub(super) fn render(self, message: &str, issues: &[Issue], body: &mut Map<String, Value>) {
        let issue_list = || serde_json::to_value(issues).unwrap_or(Value::Null);
        let own = |fixed: &'static str| {
            if fixed.is_empty() {
                message.to_string()
            } else {
                fixed.to_string()
            }
        };
        let mut put = |key: &str, value: Value| {
            body.insert(key.into(), value);
        };
        match self {
            Self::A => {
                put("error", "Invalid input".into());
                put("details", issue_list());
                put("issues", issue_list());
            }
            Self::B(fixed) => {
                put("error", own(fixed).into());
                put("details", flatten(issues));
                put("issues", issue_list());
            }
            Self::C(fixed) => {
                put("error", own(fixed).into());
                put("issues", issue_list());
            }
            Self::D => {
                put("error", "Validation failed".into());
                put("fieldErrors", flatten(issues)["fieldErrors"].clone());
                put("issues", issue_list());
            }
            Self::E => {
                put("error", joined(message, issues).into());
                put("issues", issue_list());
            }
            Self::F => {
                put("error", "Validation failed".into());
                put("details", issue_list());
            }
            Self::G => {
                put("error", joined("Validation failed", issues).into());
                put("issues", issue_list());
            }
            Self::H => {
                put("ok", false.into());
                put("progressJobId", Value::Null);
                put("message", "Invalid payload".into());
                put("error", "Invalid payload".into());
                put("issues", issue_list());
            }
            Self::I => {
                put("ok", false.into());
                put("error", "Please check the form and try again.".into());
                let mut fields = Map::new();
                for issue in issues {
                    let key = issue
                        .path
                        .first()
                        .map_or_else(String::new, |first| match first {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        });
                    fields
                        .entry(key)
                        .or_insert_with(|| Value::String(issue.message.clone()));
                }
                put("fieldErrors", Value::Object(fields));
            }
        }
    }
}

/// Keys every error answer of an operation carries beside `error`, whatever
/// raised it: the access check's 401 and 403 (before the handler), the
/// extractors, the handler. Declared per operation
/// ([`crate::http::Operation::envelope`]); the access middleware applies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorEnvelope {
    /// The bulk routes' `{ok:false, progressJobId:null, message}` (the
    /// reference's envelope of their answers; `message` repeats the error's
    /// own text unless the shape already set one, as H's `Invalid payload`).
    Bulk,
}

impl ErrorEnvelope {
    /// The name of the envelope (the `x-error-envelope` of the OpenAPI document).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bulk => "bulk",
        }
    }

    /// Adds the envelope's keys to an error `body`, keeping any already set.
    pub fn apply(self, body: &mut Map<String, Value>) {
        match self {
            Self::Bulk => {
                let message = body.get("error").cloned().unwrap_or(Value::Null);
                body.insert("ok".into(), Value::Bool(false));
                body.entry("progressJobId").or_insert(Value::Null);
                body.entry("message").or_insert(message);
            }
        }
    }
}

/// `<prefix>: <path>: <message>, <path>: <message>` (a whole-input problem
/// without its path); the prefix alone when it already names a problem.
fn joined(prefix: &str, issues: &[Issue]) -> String {
    if issues.is_empty() || prefix.contains(':') {
        return prefix.to_string();
    }
    let parts: Vec<String> = issues
        .iter()
        .map(|issue| {
            let path = dotted(&issue.path);
            if path.is_empty() {
                issue.message.clone()
            } else {
                format!("{path}: {}", issue.message)
            }
        })
        .collect();
    format!("{prefix}: {}", parts.join(", "))
}

fn dotted(path: &[Value]) -> String {
    path.iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}
