//! Typed configuration read once from the environment (and an optional `.env`).
//!
//! Every variable is documented in `docs/operations.md`. A missing required value
//! or a malformed one stops start-up with a message that names the variable.
//! Each part of the system receives only its slice ([`DbConfig`], [`HttpConfig`],
//! [`LogConfig`], [`crate::outbound::OutboundConfig`], [`crate::storage::StorageConfig`]).

use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

/// A configuration problem, naming the variable at fault.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("configuration error in {var}: {message}")]
pub struct ConfigError {
    pub var: &'static str,
    pub message: String,
}

/// A secret string that never prints its value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Database settings.
#[derive(Clone, Debug)]
pub struct DbConfig {
    /// `DATABASE_URL`; holds a password in production, so it is a [`Secret`].
    pub url: Secret,
    /// `STOA_DB_POOL_SIZE`: connections per server process.
    pub pool_size: usize,
    /// `STOA_DB_TIMEOUT_MS`: how long to wait for a connection before answering 503.
    pub timeout: Duration,
    /// `DATABASE_REPLICA_URL`: a streaming replica for the reads that may
    /// lag (`db::Db::reader`); unset, every read goes to `DATABASE_URL`.
    pub replica_url: Option<Secret>,
    /// `STOA_REPLICA_MAX_LAG_MS`: the most the replica may be behind for
    /// those reads to go there.
    pub replica_max_lag: Duration,
}

/// HTTP server settings.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// `STOA_BIND`
    pub bind: SocketAddr,
    /// `STOA_METRICS_BIND`: where `/metrics` is served; unset means not served.
    pub metrics_bind: Option<SocketAddr>,
    /// `STOA_HTTP_WORKERS`: actix worker threads; 0 means one per core.
    pub workers: usize,
    /// `STOA_CORS_ORIGINS`: comma-separated origins allowed to call the API from a browser.
    pub cors_origins: Vec<String>,
    /// `APP_URL`: the web app's URL; its origin may send cookie-authenticated
    /// writes (see `http::origin`).
    pub app_url: Option<String>,
    /// `STOA_BODY_LIMIT`: largest JSON/form body accepted, in bytes.
    pub body_limit: usize,
    /// `STOA_VERSION` or `OM_VERSION`: what `GET /api/version` reports.
    pub version: String,
    /// `STOA_SSE_KEEP_ALIVE_SECS`: how often an idle event stream sends a
    /// keep-alive comment.
    pub sse_keep_alive: Duration,
    /// `RATE_LIMIT_TRUST_PROXY_DEPTH`: how many reverse proxies in front of
    /// stoa set `X-Forwarded-*` (0: none, the headers are ignored). The
    /// origin guard reads the request's own origin through them
    /// (`http::origin`); stoa-auth reads the same variable for client
    /// addresses.
    pub trust_proxy_depth: usize,
}

/// Log output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// Logging settings.
#[derive(Clone, Debug)]
pub struct LogConfig {
    /// `STOA_LOG` (or `RUST_LOG`): an env-filter directive such as `info,stoa=debug`.
    pub filter: String,
    /// `STOA_LOG_FORMAT`: `text` (default) or `json`.
    pub format: LogFormat,
}

/// The whole configuration of a stoa process.
#[derive(Clone, Debug)]
pub struct Config {
    pub db: DbConfig,
    pub http: HttpConfig,
    pub log: LogConfig,
    /// `STOA_OUTBOUND_*`: outbound HTTP ([`crate::outbound`]).
    pub outbound: crate::outbound::OutboundConfig,
    /// `STOA_DATA_DIR`, `STOA_S3_*`: object storage ([`crate::storage`]).
    pub storage: crate::storage::StorageConfig,
}

pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;

impl FromEnv for Config {
    /// Reads `.env` (when present, without overriding the real environment) and
    /// then the process environment.
    fn from_env() -> Result<Self, ConfigError> {
        // A missing .env is normal; a malformed one is reported by name.
        if let Err(err) = dotenvy::dotenv()
            && !err.not_found()
        {
            return Err(ConfigError {
                var: ".env",
                message: err.to_string(),
            });
        }
        Self::from_vars(&std::env::vars().collect())
    }

    /// Builds the configuration from an explicit variable map (used by tests).
    fn from_vars(vars: &HashMap<String, String>) -> Result<Self, ConfigError> {
        let env = Env(vars);
        let db = DbConfig {
            url: Secret::new(env.required("DATABASE_URL")?),
            pool_size: env.parse_or("STOA_DB_POOL_SIZE", 16usize)?,
            timeout: Duration::from_millis(env.parse_or("STOA_DB_TIMEOUT_MS", 5000u64)?),
            replica_url: env
                .get("DATABASE_REPLICA_URL")
                .filter(|u| !u.trim().is_empty())
                .map(|u| Secret::new(u.trim())),
            replica_max_lag: Duration::from_millis(
                env.parse_or("STOA_REPLICA_MAX_LAG_MS", 1000u64)?,
            ),
        };
        if db.pool_size == 0 {
            return Err(ConfigError {
                var: "STOA_DB_POOL_SIZE",
                message: "must be at least 1".into(),
            });
        }
        let http = HttpConfig {
            bind: env.parse_or("STOA_BIND", parse_addr(DEFAULT_BIND))?,
            metrics_bind: env.parse_opt("STOA_METRICS_BIND")?,
            workers: env.parse_or("STOA_HTTP_WORKERS", 0usize)?,
            cors_origins: env
                .get("STOA_CORS_ORIGINS")
                .map(|v| {
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
            app_url: env.get("APP_URL").map(|u| u.trim().to_string()),
            body_limit: env.parse_or("STOA_BODY_LIMIT", DEFAULT_BODY_LIMIT)?,
            version: env
                .get("STOA_VERSION")
                .or_else(|| env.get("OM_VERSION"))
                .unwrap_or(crate::BUILD_VERSION)
                .to_string(),
            sse_keep_alive: Duration::from_secs(env.parse_or(
                "STOA_SSE_KEEP_ALIVE_SECS",
                crate::http::sse::DEFAULT_SSE_KEEP_ALIVE.as_secs(),
            )?),
            trust_proxy_depth: env.parse_or("RATE_LIMIT_TRUST_PROXY_DEPTH", 0usize)?,
        };
        if http.sse_keep_alive.is_zero() {
            return Err(ConfigError {
                var: "STOA_SSE_KEEP_ALIVE_SECS",
                message: "must be at least 1".into(),
            });
        }
        for origin in &http.cors_origins {
            if !(origin.starts_with("http://") || origin.starts_with("https://")) {
                return Err(ConfigError {
                    var: "STOA_CORS_ORIGINS",
                    message: format!("origin `{origin}` must start with http:// or https://"),
                });
            }
        }
        if let Some(url) = &http.app_url
            && crate::http::origin_of(url).is_none()
        {
            return Err(ConfigError {
                var: "APP_URL",
                message: format!("`{url}` must be an http:// or https:// URL"),
            });
        }
        let log = LogConfig {
            filter: env
                .get("STOA_LOG")
                .or_else(|| env.get("RUST_LOG"))
                .unwrap_or("info")
                .to_string(),
            format: match env.get("STOA_LOG_FORMAT").unwrap_or("text") {
                "text" => LogFormat::Text,
                "json" => LogFormat::Json,
                other => {
                    return Err(ConfigError {
                        var: "STOA_LOG_FORMAT",
                        message: format!("expected `text` or `json`, got `{other}`"),
                    });
                }
            },
        };
        let outbound = crate::outbound::OutboundConfig::from_env(&env)?;
        let storage = crate::storage::StorageConfig::from_env(&env)?;
        Ok(Self {
            db,
            http,
            log,
            outbound,
            storage,
        })
    }
}

fn parse_addr(s: &str) -> SocketAddr {
    // DEFAULT_BIND is a literal that always parses; fall back to the unspecified
    // address rather than panicking if someone edits it badly.
    s.parse()
        .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 8080)))
}

/// A variable map from `(name, value)` pairs, for [`FromEnv::from_vars`]
/// (tests, and programs that take their settings from elsewhere).
pub fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A configuration read from environment variables: [`FromEnv::from_vars`]
/// reads an explicit map (tests), [`FromEnv::from_env`] the process's
/// environment.
pub trait FromEnv: Sized {
    /// Builds the configuration from `vars`.
    fn from_vars(vars: &HashMap<String, String>) -> Result<Self, ConfigError>;

    /// Builds the configuration from the process environment.
    fn from_env() -> Result<Self, ConfigError> {
        Self::from_vars(&std::env::vars().collect())
    }
}

/// A view over variables that reports problems by name.
pub struct Env<'a>(pub &'a HashMap<String, String>);

impl Env<'_> {
    /// The value of `var`, treating an empty string as unset.
    pub fn get(&self, var: &str) -> Option<&str> {
        self.0
            .get(var)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    pub fn required(&self, var: &'static str) -> Result<String, ConfigError> {
        self.get(var).map(String::from).ok_or(ConfigError {
            var,
            message: "is required but not set".into(),
        })
    }

    pub fn parse_opt<T: FromStr>(&self, var: &'static str) -> Result<Option<T>, ConfigError>
    where
        T::Err: fmt::Display,
    {
        self.get(var)
            .map(|raw| {
                raw.trim().parse::<T>().map_err(|err| ConfigError {
                    var,
                    message: format!("cannot parse `{raw}`: {err}"),
                })
            })
            .transpose()
    }

    pub fn parse_or<T: FromStr>(&self, var: &'static str, default: T) -> Result<T, ConfigError>
    where
        T::Err: fmt::Display,
    {
        Ok(self.parse_opt(var)?.unwrap_or(default))
    }

    /// A boolean that accepts `true/false/1/0/yes/no/on/off`.
    pub fn flag(&self, var: &'static str, default: bool) -> Result<bool, ConfigError> {
        match self.get(var).map(|v| v.trim().to_ascii_lowercase()) {
            None => Ok(default),
            Some(v) => match v.as_str() {
                "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" => Ok(false),
                _ => Err(ConfigError {
                    var,
                    message: format!("expected true or false, got `{v}`"),
                }),
            },
        }
    }
}

#[cfg(test)]
mod tests;
