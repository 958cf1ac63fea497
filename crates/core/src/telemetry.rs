//! Logging: tracing-subscriber with an env filter, as text or JSON lines.

use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat};

/// Installs the global subscriber. Calling it again (tests) is harmless.
pub fn init(cfg: &LogConfig) {
    let filter = EnvFilter::try_new(&cfg.filter).unwrap_or_else(|err| {
        eprintln!(
            "STOA_LOG: invalid filter `{}` ({err}); using `info`",
            cfg.filter
        );
        EnvFilter::new("info")
    });
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
}
