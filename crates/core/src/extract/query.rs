//! Query-string extractor.

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::{Ready, ready};
use serde::de::DeserializeOwned;
use validator::Validate;

use super::issues::{invalid, path_segments, validate};
use crate::error::AppError;

/// Query parameters, deserialized and validated. Repeated keys (`roleIds=a&roleIds=b`)
/// fill a `Vec`.
#[derive(Debug)]
pub struct Query<T>(pub T);

super::wrapper!(Query);

/// Parses and validates an urlencoded string (also used by [`super::Form`]).
pub(crate) fn parse_urlencoded<T: DeserializeOwned + Validate>(
    input: &[u8],
    prefix: &str,
) -> Result<T, AppError> {
    let de = serde_html_form::Deserializer::from_bytes(input);
    let value: T = serde_path_to_error::deserialize(de).map_err(|err| {
        let path = path_segments(err.path());
        invalid(prefix, path, &err.into_inner().to_string())
    })?;
    validate(&value)?;
    Ok(value)
}

impl<T: DeserializeOwned + Validate> FromRequest for Query<T> {
    type Error = AppError;
    type Future = Ready<Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(
            parse_urlencoded(req.query_string().as_bytes(), "Invalid query parameters").map(Query),
        )
    }
}
