//! Turning serde and validator failures into `issues` with field paths.

use std::borrow::Cow;

use serde_json::Value;
use validator::{Validate, ValidationErrors, ValidationErrorsKind};

use crate::error::{AppError, Issue};

/// Converts a serde_path_to_error path into issue path segments.
pub(crate) fn path_segments(path: &serde_path_to_error::Path) -> Vec<Value> {
    use serde_path_to_error::Segment;
    path.iter()
        .filter_map(|seg| match seg {
            Segment::Seq { index } => Some(Value::from(*index)),
            Segment::Map { key } => Some(Value::from(key.as_str())),
            Segment::Enum { variant } => Some(Value::from(variant.as_str())),
            Segment::Unknown => None,
        })
        .collect()
}

/// `a.b.0.c`, or `""` for the whole value.
pub(crate) fn dotted(path: &[Value]) -> String {
    path.iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// serde_json appends " at line L column C"; clients want the message alone.
pub(crate) fn strip_location(message: &str) -> &str {
    message
        .rsplit_once(" at line ")
        .map(|(head, _)| head)
        .unwrap_or(message)
}

/// Builds the 400 for one deserialization problem.
pub(crate) fn invalid(prefix: &str, path: Vec<Value>, message: &str) -> AppError {
    let message = strip_location(message).to_string();
    let code = if message.starts_with("missing field") {
        "missing_field"
    } else if message.starts_with("unknown variant") {
        "invalid_enum_value"
    } else if message.starts_with("unknown field") {
        "unrecognized_keys"
    } else {
        "invalid_type"
    };
    let field = dotted(&path);
    let text = if field.is_empty() {
        format!("{prefix}: {message}")
    } else {
        format!("{prefix}: {field}: {message}")
    };
    AppError::bad_request(text).with_issues(vec![Issue {
        path,
        message,
        code: Cow::Borrowed(code),
    }])
}

/// Flattens validator's nested errors into issues.
pub fn issues_from_validation(errors: &ValidationErrors) -> Vec<Issue> {
    let mut out = Vec::new();
    collect(errors, &mut Vec::new(), &mut out);
    out
}

fn collect(errors: &ValidationErrors, prefix: &mut Vec<Value>, out: &mut Vec<Issue>) {
    let mut fields: Vec<_> = errors.errors().iter().collect();
    fields.sort_by(|a, b| a.0.cmp(b.0));
    for (field, kind) in fields {
        prefix.push(Value::from(field.as_ref()));
        match kind {
            ValidationErrorsKind::Field(list) => {
                for err in list {
                    let message = err
                        .message
                        .as_ref()
                        .map(|m| m.to_string())
                        .unwrap_or_else(|| describe(err));
                    out.push(Issue {
                        path: prefix.clone(),
                        message,
                        code: Cow::Owned(err.code.to_string()),
                    });
                }
            }
            ValidationErrorsKind::Struct(inner) => collect(inner, prefix, out),
            ValidationErrorsKind::List(items) => {
                for (index, inner) in items {
                    prefix.push(Value::from(*index));
                    collect(inner, prefix, out);
                    prefix.pop();
                }
            }
        }
        prefix.pop();
    }
}

/// A readable default message for validator's built-in rules.
fn describe(err: &validator::ValidationError) -> String {
    let param = |name: &str| err.params.get(name).map(|v| v.to_string());
    match err.code.as_ref() {
        "length" => match (param("min"), param("max")) {
            (Some(min), Some(max)) => format!("length must be between {min} and {max}"),
            (Some(min), None) => format!("length must be at least {min}"),
            (None, Some(max)) => format!("length must be at most {max}"),
            _ => "invalid length".into(),
        },
        "range" => match (param("min"), param("max")) {
            (Some(min), Some(max)) => format!("must be between {min} and {max}"),
            (Some(min), None) => format!("must be at least {min}"),
            (None, Some(max)) => format!("must be at most {max}"),
            _ => "out of range".into(),
        },
        "email" => "must be a valid email address".into(),
        "url" => "must be a valid URL".into(),
        other => format!("failed `{other}` validation"),
    }
}

/// Runs `validator` rules and answers 400 with `issues` when they fail.
pub fn validate<T: Validate>(value: &T) -> Result<(), AppError> {
    value.validate().map_err(|errors| {
        let issues = issues_from_validation(&errors);
        let message = issues
            .first()
            .map(|i| format!("Invalid payload: {}: {}", dotted(&i.path), i.message))
            .unwrap_or_else(|| "Invalid payload".into());
        AppError::bad_request(message).with_issues(issues)
    })
}
