//! Reading a request body with a size limit.

use actix_web::HttpRequest;
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::{Bytes, BytesMut};
use futures_util::StreamExt;

use crate::config::DEFAULT_BODY_LIMIT;
use crate::error::AppError;

/// The largest body the extractors accept, as app data; absent means
/// [`DEFAULT_BODY_LIMIT`]. A route that takes bigger bodies (uploads) sets its own.
#[derive(Clone, Copy, Debug)]
pub struct BodyLimit(pub usize);

pub(crate) fn limit_for(req: &HttpRequest) -> usize {
    req.app_data::<BodyLimit>()
        .map(|l| l.0)
        .unwrap_or(DEFAULT_BODY_LIMIT)
}

/// Rejects early when the declared length is over the limit, then reads the
/// stream and stops as soon as it passes the limit.
pub(crate) async fn read_body(
    req: &HttpRequest,
    payload: &mut Payload,
    limit: usize,
) -> Result<Bytes, AppError> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|len| len > limit) {
        return Err(AppError::payload_too_large(limit));
    }
    let mut body = BytesMut::with_capacity(declared.unwrap_or(0).min(limit));
    while let Some(chunk) = payload.next().await {
        let chunk = chunk
            .map_err(|err| AppError::bad_request(format!("Could not read request body: {err}")))?;
        if body.len() + chunk.len() > limit {
            return Err(AppError::payload_too_large(limit));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}
