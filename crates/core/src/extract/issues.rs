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

/// Where the rejected input came from; decides the top-level message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// A JSON or form body: `Invalid input`, as the reference's zod errors;
    /// the field is named by `issues` and `details.fieldErrors`.
    Body,
    /// The query string: `Invalid query parameters: <field>: <problem>`.
    Query,
    /// A path segment: `Invalid path parameter: <field>: <problem>`.
    Path,
}

impl Source {
    /// The `error` text for a problem with `field` (dotted; empty = the whole input).
    pub(crate) fn message(self, field: &str, problem: &str) -> String {
        let prefix = match self {
            Source::Body => return "Invalid input".into(),
            Source::Query => "Invalid query parameters",
            Source::Path => "Invalid path parameter",
        };
        if field.is_empty() {
            format!("{prefix}: {problem}")
        } else {
            format!("{prefix}: {field}: {problem}")
        }
    }
}

/// Builds the 400 for one deserialization problem.
pub(crate) fn invalid(source: Source, mut path: Vec<Value>, message: &str) -> AppError {
    let mut message = strip_location(message).to_string();
    // serde names a missing or unknown field in the message of its parent;
    // the issue goes under the field's own name.
    for (prefix, said) in [
        ("missing field `", "Required"),
        ("unknown field `", "Unrecognized key"),
    ] {
        if let Some(name) = message
            .strip_prefix(prefix)
            .and_then(|rest| rest.split_once('`'))
            .map(|(name, _)| name.to_string())
        {
            path.push(Value::String(name));
            message = said.to_string();
            let code = if prefix.starts_with("missing") {
                "missing_field"
            } else {
                "unrecognized_keys"
            };
            let text = source.message(&dotted(&path), &message);
            return AppError::bad_request(text).with_issues(vec![Issue {
                path,
                message,
                code: Cow::Borrowed(code),
            }]);
        }
    }
    let code = if message.starts_with("missing field") {
        "missing_field"
    } else if message.starts_with("unknown variant") {
        "invalid_enum_value"
    } else if message.starts_with("unknown field") {
        "unrecognized_keys"
    } else {
        "invalid_type"
    };
    let text = source.message(&dotted(&path), &message);
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

/// Runs `validator` rules on a body and answers 400 `Invalid input` with
/// `issues` (and `details.fieldErrors`) when they fail.
pub fn validate<T: Validate>(value: &T) -> Result<(), AppError> {
    validate_as(value, Source::Body, Wire::Unknown)
}

/// Runs `validator` rules; the message depends on where the input came from,
/// and `wire` tells the field names the client sent.
pub(crate) fn validate_as<T: Validate>(
    value: &T,
    source: Source,
    wire: Wire<'_>,
) -> Result<(), AppError> {
    value.validate().map_err(|errors| {
        let mut issues = issues_from_validation(&errors);
        wire.rename(&mut issues);
        let message = match issues.first() {
            Some(issue) => source.message(&dotted(&issue.path), &issue.message),
            None => source.message("", "invalid value"),
        };
        AppError::bad_request(message).with_issues(issues)
    })
}

/// The input a value was deserialized from. validator reports Rust field
/// names (`job_type`); clients sent the serde names (`jobType`), and `issues`
/// and `fieldErrors` must use those to land on the right form field.
pub(crate) enum Wire<'a> {
    Json(&'a [u8]),
    Urlencoded(&'a [u8]),
    /// Not known: `snake_case` names become `camelCase`, the API's convention.
    Unknown,
}

impl Wire<'_> {
    /// Rewrites each issue path to the names found in the input: a key equal to
    /// the Rust name or whose `snake_case` form is, else the `camelCase` form.
    /// validator's struct-level `__all__` segment is dropped (a `formErrors` entry).
    pub(crate) fn rename(&self, issues: &mut [Issue]) {
        let json = match self {
            Wire::Json(bytes) => serde_json::from_slice::<Value>(bytes).ok(),
            _ => None,
        };
        let flat_keys: Vec<String> = match self {
            Wire::Urlencoded(bytes) => super::text::urlencoded_names(bytes),
            _ => Vec::new(),
        };
        for issue in issues {
            let mut node = json.as_ref();
            let mut path = Vec::with_capacity(issue.path.len());
            for segment in &issue.path {
                match segment {
                    Value::String(name) if name == "__all__" => {}
                    Value::String(name) => {
                        let keys: Vec<&str> = match node {
                            Some(Value::Object(map)) => map.keys().map(String::as_str).collect(),
                            _ if path.is_empty() => flat_keys.iter().map(String::as_str).collect(),
                            _ => Vec::new(),
                        };
                        let wire = keys
                            .into_iter()
                            .find(|key| key == name || snake_case(key) == *name)
                            .map(String::from)
                            .unwrap_or_else(|| camel_case(name));
                        node = node.and_then(|n| n.get(&wire));
                        path.push(Value::String(wire));
                    }
                    index => {
                        node = node.and_then(|n| {
                            index
                                .as_u64()
                                .and_then(|i| usize::try_from(i).ok())
                                .and_then(|i| n.get(i))
                        });
                        path.push(index.clone());
                    }
                }
            }
            issue.path = path;
        }
    }
}

fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(path: Value) -> Issue {
        Issue {
            path: path.as_array().cloned().unwrap_or_default(),
            message: "m".into(),
            code: Cow::Borrowed("c"),
        }
    }

    #[test]
    fn validator_names_become_the_names_the_client_sent() {
        let mut issues = vec![
            issue(serde_json::json!(["job_type"])),
            issue(serde_json::json!(["items", 1, "unit_price"])),
            issue(serde_json::json!(["plain_snake"])),
            issue(serde_json::json!(["missing_one"])),
            issue(serde_json::json!(["__all__"])),
        ];
        let body = br#"{"jobType":"","items":[{},{"unitPrice":0}],"plain_snake":1}"#;
        Wire::Json(body).rename(&mut issues);
        let paths: Vec<Value> = issues.iter().map(|i| Value::from(i.path.clone())).collect();
        assert_eq!(
            paths,
            vec![
                serde_json::json!(["jobType"]),
                serde_json::json!(["items", 1, "unitPrice"]),
                serde_json::json!(["plain_snake"]),
                serde_json::json!(["missingOne"]),
                serde_json::json!([]),
            ]
        );
        let mut issues = vec![issue(serde_json::json!(["page_size"]))];
        Wire::Urlencoded(b"page=1&pageSize=0").rename(&mut issues);
        assert_eq!(issues[0].path, vec![Value::from("pageSize")]);
    }
}
