//! Query-string extractor.

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::{Ready, ready};
use serde::de::DeserializeOwned;
use validator::Validate;

use super::issues::{Source, Wire, invalid, path_segments, validate_as};
use super::text::{check_form_body, check_query};
use crate::error::{AppError, Issue};

/// Query parameters, deserialized and validated. Repeated keys (`roleIds=a&roleIds=b`)
/// fill a `Vec`.
#[derive(Debug)]
pub struct Query<T>(pub T);

super::wrapper!(Query);

/// Parses and validates an urlencoded string (also used by [`super::Form`],
/// with [`Source::Body`]). Control characters are refused first: any in a query
/// string, all but tab/LF/CR in a body.
pub(crate) fn parse_urlencoded<T: DeserializeOwned + Validate>(
    input: &[u8],
    source: Source,
) -> Result<T, AppError> {
    match source {
        Source::Body => check_form_body(input)?,
        _ => check_query(input)?,
    }
    let value: T =
        deserialize(input, source).map_err(|first| every_problem::<T>(input, source, first))?;
    validate_as(&value, source, Wire::Urlencoded(input))?;
    Ok(value)
}

fn deserialize<T: DeserializeOwned>(input: &[u8], source: Source) -> Result<T, AppError> {
    let de = serde_html_form::Deserializer::from_bytes(input);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = path_segments(err.path());
        invalid(source, path, &err.into_inner().to_string())
    })
}

/// Placeholders tried for a missing parameter so the ones after it are checked.
const PLACEHOLDERS: [&str; 3] = ["", "0", "false"];

/// serde stops at the first problem: collects the others by dropping the
/// faulty parameter (or adding a placeholder for a missing one) and parsing
/// again, then adds the validation rules of the rest. `first` is the error of
/// the first attempt and keeps its message.
fn every_problem<T: DeserializeOwned + Validate>(
    input: &[u8],
    source: Source,
    first: AppError,
) -> AppError {
    let Some(mut next) = first.issues().and_then(|list| list.first()).cloned() else {
        return first;
    };
    let mut issues: Vec<Issue> = Vec::new();
    let mut pairs: Vec<(String, String)> =
        url::form_urlencoded::parse(input).into_owned().collect();
    // Parameters already reported (dropped), and those holding a
    // placeholder with the index of the one tried.
    let mut dropped: Vec<String> = Vec::new();
    let mut placed: Vec<(String, usize)> = Vec::new();
    for _ in 0..64 {
        let Some(name) = next
            .path
            .first()
            .and_then(|v| v.as_str())
            .map(str::to_string)
        else {
            break;
        };
        let placeholder = if let Some(entry) = placed.iter_mut().find(|(n, _)| *n == name) {
            // The placeholder itself does not fit: the next one.
            entry.1 += 1;
            Some(entry.1)
        } else if next.code == "missing_field" {
            // Missing, or dropped for its problem: a placeholder lets the
            // parameters after it be checked.
            if !dropped.contains(&name) {
                issues.push(next.clone());
            }
            placed.push((name.clone(), 0));
            Some(0)
        } else {
            if dropped.contains(&name) {
                break;
            }
            issues.push(next.clone());
            pairs.retain(|(n, _)| *n != name);
            dropped.push(name.clone());
            None
        };
        if let Some(placeholder) = placeholder {
            let Some(value) = PLACEHOLDERS.get(placeholder) else {
                break;
            };
            pairs.retain(|(n, _)| *n != name);
            pairs.push((name, (*value).to_string()));
        }
        let again = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(&pairs)
            .finish();
        match deserialize::<T>(again.as_bytes(), source) {
            Ok(value) => {
                // The rules of the parameters that parsed (a placeholder's
                // own problems are not the client's).
                if let Err(err) = validate_as(&value, source, Wire::Urlencoded(again.as_bytes())) {
                    for extra in err.issues().unwrap_or_default() {
                        let field = extra.path.first().and_then(|v| v.as_str());
                        let ours = placed.iter().any(|(n, _)| Some(n.as_str()) == field);
                        if !ours
                            && !issues
                                .iter()
                                .any(|known| known.path.first() == extra.path.first())
                        {
                            issues.push(extra.clone());
                        }
                    }
                }
                break;
            }
            Err(err) => match err.issues().and_then(|list| list.first()).cloned() {
                Some(issue) => next = issue,
                None => break,
            },
        }
    }
    if issues.is_empty() {
        return first;
    }
    AppError::bad_request(first.message().to_string()).with_issues(issues)
}

impl<T: DeserializeOwned + Validate> FromRequest for Query<T> {
    type Error = AppError;
    type Future = Ready<Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(parse_urlencoded(req.query_string().as_bytes(), Source::Query).map(Query))
    }
}
