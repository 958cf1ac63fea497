//! Traces over OTLP/HTTP, on only when the operator names a collector
//! (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
//!
//! What becomes a span: each HTTP request (the root, or a child of the
//! caller's `traceparent`), each transaction and statement sent to Postgres
//! ([`statements`]), each outbound HTTP call (which carries `traceparent` on),
//! and each job a worker runs, as a child of the request that queued it (the
//! job row keeps that request's `traceparent`).
//!
//! Unset, no layer is installed and every hook here is one relaxed atomic
//! load that answers "off": no span is built, nothing is formatted or sent.

mod export;
pub(crate) mod outbound;
pub(crate) mod statements;

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt;

pub use export::ExportError;

static ENABLED: AtomicBool = AtomicBool::new(false);
static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();

/// Where spans go: the OTLP/HTTP traces URL (`.../v1/traces`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceConfig {
    pub traces_url: String,
}

impl TraceConfig {
    /// From the standard OpenTelemetry variables: the per-signal
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` plus `/v1/traces`. `None` (tracing off)
    /// when neither is set, when `OTEL_SDK_DISABLED=true` or when
    /// `OTEL_TRACES_EXPORTER=none`.
    pub fn from_env() -> Option<Self> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"))
        {
            return None;
        }
        if let Some(url) = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            return Some(Self {
                traces_url: url.trim().to_string(),
            });
        }
        var("OTEL_EXPORTER_OTLP_ENDPOINT").map(|base| Self::collector(&base))
    }

    /// A collector's base URL (`http://host:4318`): spans go to `/v1/traces`.
    pub fn collector(base: &str) -> Self {
        Self {
            traces_url: format!("{}/v1/traces", base.trim().trim_end_matches('/')),
        }
    }
}

/// Whether spans are being exported (the hooks' one check).
#[inline]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Builds the exporter and returns the layer that turns spans into OTLP
/// spans; marks tracing on. `None` when a provider is already installed in
/// this process (a second init).
pub(crate) fn layer<S>(
    cfg: &TraceConfig,
) -> Result<
    Option<tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::SdkTracer>>,
    ExportError,
>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    if PROVIDER.get().is_some() {
        return Ok(None);
    }
    let provider = export::provider(cfg)?;
    let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "stoa");
    if PROVIDER.set(provider).is_err() {
        return Ok(None);
    }
    ENABLED.store(true, Ordering::Relaxed);
    Ok(Some(tracing_opentelemetry::layer().with_tracer(tracer)))
}

/// Sends the spans still queued (tests, and before a process exits).
pub fn flush() {
    if let Some(provider) = PROVIDER.get()
        && let Err(err) = provider.force_flush()
    {
        eprintln!("traces: flush failed ({err})");
    }
}

/// Flushes and stops the exporter; call once, as the process ends.
pub fn shutdown() {
    if let Some(provider) = PROVIDER.get() {
        ENABLED.store(false, Ordering::Relaxed);
        if let Err(err) = provider.shutdown() {
            eprintln!("traces: shutdown failed ({err})");
        }
    }
}

/// Makes `span` a child of the `traceparent` the caller sent (W3C Trace
/// Context), and records its trace id for the log lines. Does nothing when
/// tracing is off or the header is absent or malformed (the span is a root).
pub fn continue_from_headers(span: &tracing::Span, headers: &actix_web::http::header::HeaderMap) {
    if !enabled() {
        return;
    }
    let parent = TraceContextPropagator::new().extract(&ActixHeaders(headers));
    adopt(span, parent);
}

/// The current span's context in `traceparent` form, to store with work
/// that runs later (a queued job). `None` when tracing is off.
pub fn current_traceparent() -> Option<String> {
    if !enabled() {
        return None;
    }
    let cx = tracing::Span::current().context();
    if !cx.span().span_context().is_valid() {
        return None;
    }
    let mut fields = HashMap::new();
    TraceContextPropagator::new().inject_context(&cx, &mut fields);
    fields.remove("traceparent")
}

/// A span for work that was queued by an earlier request: a child of the
/// stored `traceparent`, so the job's spans join that request's trace.
/// [`tracing::Span::none`] when tracing is off.
pub fn job_span(
    kind: &str,
    job_id: impl std::fmt::Display,
    traceparent: Option<&str>,
) -> tracing::Span {
    if !enabled() {
        return tracing::Span::none();
    }
    let span = tracing::info_span!(
        "job",
        otel.name = %format_args!("job {kind}"),
        otel.kind = "consumer",
        job.kind = %kind,
        job.id = %job_id,
        trace_id = tracing::field::Empty,
    );
    let mut carrier = HashMap::new();
    if let Some(value) = traceparent {
        carrier.insert("traceparent".to_string(), value.to_string());
    }
    adopt(&span, TraceContextPropagator::new().extract(&carrier));
    span
}

/// The `traceparent` header for an outbound call made inside the current
/// span. Empty when tracing is off.
pub fn outbound_headers() -> Vec<(String, String)> {
    if !enabled() {
        return Vec::new();
    }
    let mut headers = HeaderPairs(Vec::new());
    TraceContextPropagator::new().inject_context(&tracing::Span::current().context(), &mut headers);
    headers.0
}

fn adopt(span: &tracing::Span, parent: opentelemetry::Context) {
    if parent.span().span_context().is_valid() {
        // Fails only when the span is disabled (filtered out): then it is
        // exported by nobody and the parent does not matter.
        drop(span.set_parent(parent));
    }
    let trace_id = span.context().span().span_context().trace_id();
    span.record("trace_id", tracing::field::display(trace_id));
}

struct ActixHeaders<'a>(&'a actix_web::http::header::HeaderMap);

impl Extractor for ActixHeaders<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

struct HeaderPairs(Vec<(String, String)>);

impl Injector for HeaderPairs {
    fn set(&mut self, key: &str, value: String) {
        self.0.push((key.to_string(), value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collector_url_gets_the_traces_path() {
        assert_eq!(
            TraceConfig::collector("http://127.0.0.1:4318/").traces_url,
            "http://127.0.0.1:4318/v1/traces"
        );
    }

    #[test]
    fn off_means_no_span_and_no_header() {
        // No provider is installed in this test binary.
        assert!(!enabled());
        assert!(
            job_span(
                "x",
                "1",
                Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
            )
            .is_none()
        );
        assert!(outbound_headers().is_empty());
        assert_eq!(current_traceparent(), None);
    }
}
