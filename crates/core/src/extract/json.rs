//! JSON body extractor.

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use validator::Validate;

use super::body::{limit_for, read_body};
use super::issues::{Source, Wire, invalid, path_segments, validate_as};
use super::text::check_json_body;
use crate::error::AppError;

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
            parse_json(&bytes).map(Json)
        })
    }
}

/// Parses and validates a JSON document (also used by [`super::Form`]).
pub(crate) fn parse_json<T: DeserializeOwned + Validate>(bytes: &[u8]) -> Result<T, AppError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(AppError::bad_request(
            "Invalid JSON body: the body is empty",
        ));
    }
    check_json_body(bytes)?;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = match serde_path_to_error::deserialize(&mut de) {
        Ok(value) => value,
        Err(err) => {
            let path = path_segments(err.path());
            let inner = err.into_inner();
            return Err(match inner.classify() {
                serde_json::error::Category::Data => {
                    invalid(Source::Body, path, &inner.to_string())
                }
                _ => AppError::bad_request(format!(
                    "Invalid JSON body: {}",
                    super::issues::strip_location(&inner.to_string())
                )),
            });
        }
    };
    de.end().map_err(|_| {
        AppError::bad_request("Invalid JSON body: trailing characters after the document")
    })?;
    validate_as(&value, Source::Body, Wire::Json(bytes))?;
    Ok(value)
}
