//! The span of an outbound HTTP call, and the `traceparent` it carries on.

use reqwest::RequestBuilder;
use reqwest::header::{HeaderName, HeaderValue};

/// When traces are exported: a client span for the request `builder` is
/// about to send, and the builder with that span's `traceparent` added. The
/// span names the method and the URL without its query (which may hold
/// secrets). Off: the builder unchanged and a disabled span.
pub(crate) fn start(
    builder: RequestBuilder,
) -> Result<(RequestBuilder, tracing::Span), reqwest::Error> {
    if !super::enabled() {
        return Ok((builder, tracing::Span::none()));
    }
    let (client, request) = builder.build_split();
    let mut request = request?;
    let url = request.url();
    let span = tracing::info_span!(
        "outbound",
        otel.name = %format_args!("{} {}", request.method(), url.host_str().unwrap_or("")),
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        http.request.method = %request.method(),
        url.full = %format_args!("{}://{}{}", url.scheme(), url.authority(), url.path()),
        http.response.status_code = tracing::field::Empty,
    );
    for (name, value) in span.in_scope(super::outbound_headers) {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            request.headers_mut().insert(name, value);
        }
    }
    Ok((RequestBuilder::from_parts(client, request), span))
}

/// Records the answer's status on the call's span.
pub(crate) fn finish(span: &tracing::Span, status: u16) {
    if span.is_none() {
        return;
    }
    span.record("http.response.status_code", status);
    if status >= 500 {
        span.record("otel.status_code", "ERROR");
    }
}
