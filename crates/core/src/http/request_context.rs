//! The outermost middleware: request id, tracing span, access log line, metrics
//! and a panic guard that turns a panicking handler into a JSON 500.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, web};
use futures_util::FutureExt;
use tracing::Instrument;

use super::metrics::Metrics;
use crate::error::AppError;

/// The request id, stored in request extensions and echoed as `x-request-id`.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

const HEADER: HeaderName = HeaderName::from_static(super::headers::REQUEST_ID);

/// Accepts a client-supplied id when it is short and printable (so it cannot
/// forge log lines); otherwise generates one.
fn request_id(req: &ServiceRequest) -> String {
    req.headers()
        .get(&HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty()
                && v.len() <= 128
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
        })
        .map(String::from)
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string())
}

pub async fn request_context(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let started = Instant::now();
    let id = request_id(&req);
    req.extensions_mut().insert(RequestId(id.clone()));
    let metrics = req.app_data::<web::Data<Metrics>>().cloned();
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        http.method = %req.method(),
        http.path = %req.path(),
        // Filled only while traces are exported (crate::traces): the span's
        // name and kind there, and the trace id on every log line.
        otel.name = tracing::field::Empty,
        otel.kind = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        trace_id = tracing::field::Empty,
    );
    if crate::traces::enabled() {
        span.record("otel.kind", "server");
        span.record(
            "otel.name",
            tracing::field::display(format_args!("{} {}", req.method(), req.path())),
        );
        crate::traces::continue_from_headers(&span, req.headers());
    }

    // Each request starts with no tenant rows in reach; the authenticator
    // opens its tenant (crate::rls). Its heavy reads may go to the replica
    // until it writes (crate::db::Db::reader).
    let outcome = AssertUnwindSafe(
        crate::db::lagging_reads(crate::rls::request(next.call(req))).instrument(span.clone()),
    )
    .catch_unwind()
    .await;
    // The request cannot be cloned before routing (actix needs it unshared), so
    // errors and panics are handed back to actix, which renders the error's own
    // JSON response.
    let mut res = match outcome {
        Ok(Ok(res)) => res.map_into_boxed_body(),
        Ok(Err(err)) => return Err(err),
        Err(_) => {
            let _entered = span.enter();
            return Err(AppError::internal("handler panicked").into());
        }
    };
    if let Ok(value) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(HEADER, value);
    }

    let elapsed = started.elapsed();
    let status = res.status().as_u16();
    let route = res.request().match_pattern();
    if let Some(metrics) = metrics {
        metrics.observe(
            res.request().method().as_str(),
            route.as_deref(),
            status,
            elapsed,
        );
    }
    if crate::traces::enabled() {
        // The route pattern names the span (bounded set) once it is known.
        if let Some(route) = route.as_deref() {
            span.record(
                "otel.name",
                tracing::field::display(format_args!("{} {route}", res.request().method())),
            );
        }
        if status >= 500 {
            span.record("otel.status_code", "ERROR");
        }
    }
    span.in_scope(|| {
        tracing::info!(
            http.status = status,
            http.route = route.as_deref().unwrap_or("unmatched"),
            latency_ms = elapsed.as_secs_f64() * 1000.0,
            "handled"
        );
    });
    Ok(res)
}
