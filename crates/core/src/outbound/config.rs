//! Outbound HTTP settings, read from `STOA_OUTBOUND_*`.

use std::time::Duration;

use super::Cidr;
use crate::config::{ConfigError, Env};

/// Outbound HTTP settings (`STOA_OUTBOUND_*`).
#[derive(Clone, Debug)]
pub struct OutboundConfig {
    /// `STOA_OUTBOUND_CONNECT_TIMEOUT_MS`: time to open a connection (TCP + TLS).
    pub connect_timeout: Duration,
    /// `STOA_OUTBOUND_FIRST_BYTE_TIMEOUT_MS`: from sending the request to the
    /// response head (a model provider thinking before it streams).
    pub first_byte_timeout: Duration,
    /// `STOA_OUTBOUND_IDLE_TIMEOUT_MS`: the longest pause between two chunks
    /// of the response body. There is no total timeout: a stream that keeps
    /// producing may run as long as it needs (a caller that wants one sets
    /// `OutboundRequest::deadline`).
    pub idle_timeout: Duration,
    /// `STOA_OUTBOUND_MAX_RESPONSE_BYTES`: largest response body read.
    pub max_response_bytes: usize,
    /// `STOA_OUTBOUND_MAX_REDIRECTS`: redirects followed (each one checked).
    pub max_redirects: usize,
    /// `STOA_OUTBOUND_ALLOW`: comma-separated blocks that requests from API
    /// input may reach although they are not public (`10.0.0.0/8,127.0.0.1`).
    pub allow: Vec<Cidr>,
}

impl Default for OutboundConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(5),
            first_byte_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(30),
            max_response_bytes: 10 * 1024 * 1024,
            max_redirects: 5,
            allow: Vec::new(),
        }
    }
}

impl OutboundConfig {
    /// Reads `STOA_OUTBOUND_*`.
    pub fn from_env(env: &Env<'_>) -> Result<Self, ConfigError> {
        let d = Self::default();
        let millis = |var: &'static str, default: Duration| -> Result<Duration, ConfigError> {
            let ms: u64 = env.parse_or(var, u64::try_from(default.as_millis()).unwrap_or(0))?;
            if ms == 0 {
                return Err(ConfigError {
                    var,
                    message: "must be at least 1".into(),
                });
            }
            Ok(Duration::from_millis(ms))
        };
        let allow = match env.get("STOA_OUTBOUND_ALLOW") {
            None => Vec::new(),
            Some(list) => list
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.parse::<Cidr>().map_err(|message| ConfigError {
                        var: "STOA_OUTBOUND_ALLOW",
                        message,
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        Ok(Self {
            connect_timeout: millis("STOA_OUTBOUND_CONNECT_TIMEOUT_MS", d.connect_timeout)?,
            first_byte_timeout: millis(
                "STOA_OUTBOUND_FIRST_BYTE_TIMEOUT_MS",
                d.first_byte_timeout,
            )?,
            idle_timeout: millis("STOA_OUTBOUND_IDLE_TIMEOUT_MS", d.idle_timeout)?,
            max_response_bytes: env
                .parse_or("STOA_OUTBOUND_MAX_RESPONSE_BYTES", d.max_response_bytes)?,
            max_redirects: env.parse_or("STOA_OUTBOUND_MAX_REDIRECTS", d.max_redirects)?,
            allow,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_reads_the_allowlist_and_timeouts() {
        let vars: std::collections::HashMap<String, String> = [
            ("STOA_OUTBOUND_ALLOW", "10.0.0.0/8, ,fd00::/8"),
            ("STOA_OUTBOUND_IDLE_TIMEOUT_MS", "1500"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let cfg = OutboundConfig::from_env(&Env(&vars)).unwrap_or_default();
        assert_eq!(cfg.allow.len(), 2);
        assert_eq!(cfg.idle_timeout, Duration::from_millis(1500));
        assert_eq!(cfg.first_byte_timeout, Duration::from_secs(30));
        assert_eq!(cfg.connect_timeout, Duration::from_secs(5));
    }
}
