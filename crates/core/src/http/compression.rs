//! Responses the app-wide `Compress` middleware must leave alone: event
//! streams (gzip holds bytes back until it flushes, and a frame per flush
//! compresses nothing anyway) and downloads (files are usually compressed
//! already, and a compressed stream loses its `Content-Length`, so clients
//! cannot show progress).
//!
//! actix's `Compress` skips a response that already carries
//! `Content-Encoding`; [`no_compression`] marks a response with
//! `Content-Encoding: identity`, and [`strip_identity_encoding`], mounted just
//! outside `Compress`, removes the marker again (`identity` is not meant to be
//! sent in `Content-Encoding`, RFC 9110 §8.4.1).

use actix_web::HttpResponseBuilder;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;

/// Keeps `Compress` from encoding this response.
pub fn no_compression(builder: &mut HttpResponseBuilder) -> &mut HttpResponseBuilder {
    builder.insert_header((
        header::CONTENT_ENCODING,
        HeaderValue::from_static("identity"),
    ))
}

/// Middleware (outside `Compress`): drops the marker [`no_compression`] set.
pub async fn strip_identity_encoding(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let mut res = next.call(req).await?;
    let headers = res.headers_mut();
    if headers
        .get(header::CONTENT_ENCODING)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"identity"))
    {
        headers.remove(header::CONTENT_ENCODING);
    }
    Ok(res)
}
