//! Logging: tracing-subscriber with an env filter, as text or JSON lines;
//! and, when a collector is configured, span export (crate::traces).

use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::config::{LogConfig, LogFormat};
use crate::traces::TraceConfig;

/// Installs the global subscriber, exporting spans when the OpenTelemetry
/// variables name a collector ([`TraceConfig::from_env`]). Calling it again
/// (tests) is harmless.
pub fn init(cfg: &LogConfig) {
    init_with(cfg, TraceConfig::from_env().as_ref());
}

/// [`init`] with the trace export given (`None`: logs only).
pub fn init_with(cfg: &LogConfig, traces: Option<&TraceConfig>) {
    let filter = EnvFilter::try_new(&cfg.filter).unwrap_or_else(|err| {
        eprintln!(
            "STOA_LOG: invalid filter `{}` ({err}); using `info`",
            cfg.filter
        );
        EnvFilter::new("info")
    });
    let Some(traces) = traces else {
        // No collector: the plain subscriber, no span kept beyond the log's.
        let builder = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_target(false);
        let result = match cfg.format {
            LogFormat::Text => builder.try_init(),
            LogFormat::Json => builder
                .json()
                .flatten_event(true)
                .with_current_span(true)
                .try_init(),
        };
        // Already installed (a second init in the same process) is fine.
        drop(result);
        return;
    };
    let otel = match crate::traces::layer(traces) {
        Ok(layer) => layer,
        Err(err) => {
            eprintln!("{err}; spans are not exported");
            None
        }
    };
    // The log filter applies to the log lines only: an operator who logs at
    // `warn` still gets the request and database spans. Spans are stoa's own,
    // at info or above (libraries' spans, the exporter's client among them,
    // stay out).
    let otel = otel.map(|layer| {
        layer.with_filter(tracing_subscriber::filter::filter_fn(|meta| {
            meta.target().starts_with("stoa") && *meta.level() <= tracing::Level::INFO
        }))
    });
    let fmt = tracing_subscriber::fmt::layer().with_target(false);
    let fmt = match cfg.format {
        LogFormat::Text => fmt.boxed(),
        LogFormat::Json => fmt
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .boxed(),
    };
    let result = tracing_subscriber::registry()
        .with(otel)
        .with(fmt.with_filter(filter))
        .try_init();
    drop(result);
}
