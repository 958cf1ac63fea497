//! Query-string extractor.

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::{Ready, ready};
use serde::de::DeserializeOwned;
use validator::Validate;

use super::issues::{Source, Wire, invalid, path_segments, validate_as};
use super::text::{check_form_body, check_query};
use crate::error::AppError;

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
    let de = serde_html_form::Deserializer::from_bytes(input);
    let value: T = serde_path_to_error::deserialize(de).map_err(|err| {
        let path = path_segments(err.path());
        invalid(source, path, &err.into_inner().to_string())
    })?;
    validate_as(&value, source, Wire::Urlencoded(input))?;
    Ok(value)
}

impl<T: DeserializeOwned + Validate> FromRequest for Query<T> {
    type Error = AppError;
    type Future = Ready<Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(parse_urlencoded(req.query_string().as_bytes(), Source::Query).map(Query))
    }
}
