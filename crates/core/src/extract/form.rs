//! Form body extractor (`application/x-www-form-urlencoded`, or JSON for API clients).

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use validator::Validate;

use super::body::{limit_for, read_body};
use super::issues::Source;
use super::json::parse_json_for;
use super::query::parse_urlencoded;
use crate::error::AppError;

/// A form body, deserialized and validated.
#[derive(Debug)]
pub struct Form<T>(pub T);

super::wrapper!(Form);

impl<T: DeserializeOwned + Validate + 'static> FromRequest for Form<T> {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let mut payload = payload.take();
        Box::pin(async move {
            let content_type = req
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            let bytes = read_body(&req, &mut payload, limit_for(&req)).await?;
            if content_type.starts_with("application/json") {
                parse_json_for(&req, &bytes).map(Form)
            } else if content_type.is_empty()
                || content_type.starts_with("application/x-www-form-urlencoded")
            {
                parse_urlencoded(&bytes, Source::Body).map(Form)
            } else {
                Err(AppError::new(
                    actix_web::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "Expected an application/x-www-form-urlencoded body",
                ))
            }
        })
    }
}
