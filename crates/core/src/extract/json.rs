//! JSON body extractor.

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use validator::Validate;

use super::body::{limit_for, read_body};
use std::borrow::Cow;

use super::issues::{Source, Wire, invalid, path_segments, validate_as};
use super::text::check_json_body;
use crate::error::{AppError, ErrorShape, Issue};
use crate::http::BadJson;

/// A JSON request body, deserialized and validated.
#[derive(Debug)]
pub struct Json<T>(pub T);

super::wrapper!(Json);

impl<T: DeserializeOwned + Validate + 'static> FromRequest for Json<T> {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let mut payload = payload.take();
        Box::pin(async move {
            let limit = limit_for(&req);
            let bytes = read_body(&req, &mut payload, limit).await?;
            parse_json_for(&req, &bytes).map(Json)
        })
    }
}

/// The reference's custom fields (`cf_*` keys) do not exist here: a body
/// carrying one is refused naming the key, so no client data is dropped
/// silently (other unknown keys are ignored, as the reference strips them).
fn refuse_custom_fields(bytes: &[u8]) -> Result<(), AppError> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(bytes)
    else {
        return Ok(());
    };
    let custom: Vec<&String> = map.keys().filter(|k| k.starts_with("cf_")).collect();
    if custom.is_empty() {
        return Ok(());
    }
    let issues = custom
        .iter()
        .map(|key| Issue {
            code: "unrecognized_keys".into(),
            path: vec![serde_json::Value::String((*key).clone())],
            message: format!("Custom fields are not supported: {key}"),
        })
        .collect();
    Err(AppError::bad_request(format!(
        "Custom fields are not supported: {}",
        custom
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ))
    .with_issues(issues))
}

/// [`parse_json`] for a request: a body that is not JSON answers as its
/// route declares (see [`not_json`]).
pub(crate) fn parse_json_for<T: DeserializeOwned + Validate>(
    req: &HttpRequest,
    bytes: &[u8],
) -> Result<T, AppError> {
    parse_json(bytes).map_err(|err| match not_json(&err) {
        Some(issue) => {
            let shape = req.extensions().get::<ErrorShape>().copied();
            let bad_json = req.extensions().get::<BadJson>().copied();
            as_declared::<T>(shape, bad_json, issue)
        }
        None => err,
    })
}

/// The path-less issue of a body that is not JSON at all.
fn not_json(err: &AppError) -> Option<Issue> {
    err.issues()?
        .iter()
        .find(|issue| issue.code == INVALID_JSON)
        .cloned()
}

/// A body that is not JSON, in the route's words:
/// - a declared message ([`BadJson`], e.g. the sidebar's `Invalid JSON`) is
///   the whole answer (with `ok:false` on the shapes that carry it);
/// - the CRUD routes (shape A) read it as `{}`, as the reference does, so the
///   client sees the required fields as field issues, then the JSON problem;
/// - any other shape reports the JSON problem alone.
fn as_declared<T: DeserializeOwned + Validate>(
    shape: Option<ErrorShape>,
    bad_json: Option<BadJson>,
    issue: Issue,
) -> AppError {
    if let Some(BadJson(message)) = bad_json {
        let err = AppError::bad_request(message).with_field("issues", [&issue]);
        return match shape {
            Some(ErrorShape::H) => err
                .ok_false()
                .with_field("progressJobId", serde_json::Value::Null)
                .with_field("message", message),
            Some(ErrorShape::I) => err.ok_false(),
            _ => err,
        };
    }
    if shape != Some(ErrorShape::A) {
        return AppError::bad_request("Invalid input").with_issues(vec![issue]);
    }
    let empty = serde_json::Value::Object(serde_json::Map::new());
    let mut issues = match serde_path_to_error::deserialize::<_, T>(&empty) {
        Ok(value) => {
            let mut found = value
                .validate()
                .err()
                .map(|errors| super::issues_from_validation(&errors))
                .unwrap_or_default();
            Wire::Unknown.rename(&mut found);
            found
        }
        Err(err) => {
            let first = invalid(
                Source::Body,
                path_segments(err.path()),
                &err.inner().to_string(),
            );
            every_problem::<T>(empty, first)
                .issues()
                .map(<[Issue]>::to_vec)
                .unwrap_or_default()
        }
    };
    issues.push(issue);
    AppError::bad_request("Invalid input").with_issues(issues)
}

/// Parses and validates a JSON document (also used by [`super::Form`], and
/// by handlers that read a raw body themselves). Every failing field is reported (a wrong type, a missing required field
/// under its own name, a validation rule), not only the first.
pub fn parse_json<T: DeserializeOwned + Validate>(bytes: &[u8]) -> Result<T, AppError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(whole_input("Invalid JSON body: the body is empty"));
    }
    check_json_body(bytes)?;
    refuse_custom_fields(bytes)?;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = match serde_path_to_error::deserialize(&mut de) {
        Ok(value) => value,
        Err(err) => {
            let inner = err.inner();
            if inner.classify() != serde_json::error::Category::Data {
                return Err(whole_input(&format!(
                    "Invalid JSON body: {}",
                    super::issues::strip_location(&inner.to_string())
                )));
            }
            let first = invalid(Source::Body, path_segments(err.path()), &inner.to_string());
            return Err(match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(document) => every_problem::<T>(document, first),
                Err(_) => first,
            });
        }
    };
    de.end()
        .map_err(|_| whole_input("Invalid JSON body: trailing characters after the document"))?;
    validate_as(&value, Source::Body, Wire::Json(bytes))?;
    Ok(value)
}

/// The issue code of a body that is not JSON.
const INVALID_JSON: &str = "invalid_json";

/// A problem with the whole body (not JSON, empty), as a path-less issue so
/// that every error shape can carry it.
fn whole_input(message: &str) -> AppError {
    AppError::bad_request("Invalid input").with_issues(vec![Issue {
        path: Vec::new(),
        message: message.to_string(),
        code: Cow::Borrowed(INVALID_JSON),
    }])
}

/// Placeholders tried for a missing field so the fields after it are checked.
fn placeholders() -> [serde_json::Value; 6] {
    use serde_json::json;
    [
        json!(""),
        json!(0),
        json!(false),
        json!([]),
        json!({}),
        json!(null),
    ]
}

/// serde stops at the first problem: collects the others by taking the
/// faulty value out (or putting a placeholder in for a missing field) and
/// deserializing again, then adds the validation rules of the remaining
/// fields. `first` is the error of the first attempt.
fn every_problem<T: DeserializeOwned + Validate>(
    mut document: serde_json::Value,
    first: AppError,
) -> AppError {
    let mut issues: Vec<Issue> = Vec::new();
    // Paths holding a placeholder, with the index of the one tried.
    let mut placed: Vec<(Vec<serde_json::Value>, usize)> = Vec::new();
    for _ in 0..128 {
        let err = match serde_path_to_error::deserialize::<_, T>(&document) {
            Ok(value) => {
                if let Err(errors) = value.validate() {
                    let mut extra = super::issues_from_validation(&errors);
                    let body = serde_json::to_vec(&document).unwrap_or_default();
                    Wire::Json(&body).rename(&mut extra);
                    for issue in extra {
                        if !issues.iter().any(|known| same_field(known, &issue)) {
                            issues.push(issue);
                        }
                    }
                }
                break;
            }
            Err(err) => err,
        };
        let path = path_segments(err.path());
        let message = err.inner().to_string();
        let Some(issue) = invalid(Source::Body, path, &message)
            .issues()
            .and_then(|list| list.first().cloned())
        else {
            break;
        };
        let next = if let Some(entry) = placed.iter_mut().find(|(p, _)| *p == issue.path) {
            // The placeholder itself does not fit: the next one.
            entry.1 += 1;
            entry.1
        } else if issue.code == "missing_field" {
            if !issues.iter().any(|known| known.path == issue.path) {
                issues.push(issue.clone());
            }
            placed.push((issue.path.clone(), 0));
            0
        } else {
            let known = issues.contains(&issue);
            if !known {
                issues.push(issue.clone());
            }
            if known || !remove(&mut document, &issue.path) {
                break;
            }
            continue;
        };
        let Some(value) = placeholders().get(next).cloned() else {
            break;
        };
        if !insert(&mut document, &issue.path, value) {
            break;
        }
    }
    if issues.is_empty() {
        return first;
    }
    AppError::bad_request("Invalid input").with_issues(issues)
}

/// Two issues about the same field (its first path segment).
fn same_field(a: &Issue, b: &Issue) -> bool {
    !a.path.is_empty() && a.path.first() == b.path.first()
}

/// The object holding the last segment of `path`, and that key.
fn parent<'a>(
    document: &'a mut serde_json::Value,
    path: &[serde_json::Value],
) -> Option<(&'a mut serde_json::Map<String, serde_json::Value>, String)> {
    let (last, parent_path) = path.split_last()?;
    let mut node = document;
    for segment in parent_path {
        node = match segment {
            serde_json::Value::String(key) => node.get_mut(key.as_str())?,
            other => node.get_mut(usize::try_from(other.as_u64()?).ok()?)?,
        };
    }
    Some((node.as_object_mut()?, last.as_str()?.to_string()))
}

fn remove(document: &mut serde_json::Value, path: &[serde_json::Value]) -> bool {
    parent(document, path).is_some_and(|(map, key)| map.remove(&key).is_some())
}

fn insert(
    document: &mut serde_json::Value,
    path: &[serde_json::Value],
    value: serde_json::Value,
) -> bool {
    parent(document, path).is_some_and(|(map, key)| {
        map.insert(key, value);
        true
    })
}
