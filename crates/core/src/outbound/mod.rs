//! Outbound HTTP, configured once: the client modules use to call other
//! services (rules' webhook actions, AI providers).
//!
//! [`Outbound`] holds two clients built from [`OutboundConfig`]:
//!
//! - [`Outbound::guarded`] for addresses that come from API input (a webhook
//!   URL, a runtime base-URL override). It refuses loopback, link-local,
//!   private and other non-public addresses — checked after DNS resolution,
//!   on literal IPs in the URL and on every redirect — unless
//!   `STOA_OUTBOUND_ALLOW` names them ([`guard`]).
//! - [`Outbound::trusted`] for addresses from the operator's environment (a
//!   provider's base URL set in an env variable).
//!
//! Both use rustls with the ring provider (no OpenSSL, no second crypto
//! stack), the Mozilla root certificates, a connect timeout, a total timeout
//! and a bound on the response body ([`OutboundClient::send`] reads at most
//! `STOA_OUTBOUND_MAX_RESPONSE_BYTES`). Only `http` and `https` URLs are
//! accepted; proxies from the environment are ignored.

pub mod guard;

use std::sync::Arc;
use std::time::Duration;

use actix_web::http::StatusCode;
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use reqwest::header::HeaderMap;
use reqwest::{Method, RequestBuilder, Url, redirect};

use crate::config::{ConfigError, Env};
use crate::error::ApiError;
pub use guard::{AddressGuard, BlockedAddress, Cidr, GuardedResolver};

/// Outbound HTTP settings (`STOA_OUTBOUND_*`).
#[derive(Clone, Debug)]
pub struct OutboundConfig {
    /// `STOA_OUTBOUND_CONNECT_TIMEOUT_MS`: time to open a connection (TCP + TLS).
    pub connect_timeout: Duration,
    /// `STOA_OUTBOUND_TIMEOUT_MS`: the whole request, body included.
    pub timeout: Duration,
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
            timeout: Duration::from_secs(30),
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
            timeout: millis("STOA_OUTBOUND_TIMEOUT_MS", d.timeout)?,
            max_response_bytes: env
                .parse_or("STOA_OUTBOUND_MAX_RESPONSE_BYTES", d.max_response_bytes)?,
            max_redirects: env.parse_or("STOA_OUTBOUND_MAX_REDIRECTS", d.max_redirects)?,
            allow,
        })
    }
}

/// A failed outbound request.
#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    /// Not an absolute `http`/`https` URL with a host.
    #[error("invalid URL: {0}")]
    InvalidUrl(String),
    /// The address guard refused the destination (or a redirect's).
    #[error(transparent)]
    Blocked(BlockedAddress),
    /// The connect or total timeout passed.
    #[error("the remote server did not answer in time")]
    Timeout,
    /// The response body is larger than allowed.
    #[error("the response is larger than {limit} bytes")]
    TooLarge { limit: usize },
    /// More redirects than allowed.
    #[error("too many redirects")]
    TooManyRedirects,
    /// Connection, TLS or protocol failure (the message stays generic: the
    /// cause, kept as the source, is for logs).
    #[error("the remote server could not be reached or did not answer properly")]
    Request(#[source] reqwest::Error),
    /// The client could not be built (bad TLS setup).
    #[error("outbound client setup failed: {0}")]
    Setup(String),
}

impl ApiError for OutboundError {
    fn status(&self) -> StatusCode {
        match self {
            Self::InvalidUrl(_) | Self::Blocked(_) => StatusCode::BAD_REQUEST,
            Self::Timeout => StatusCode::GATEWAY_TIMEOUT,
            Self::Setup(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::TooLarge { .. } | Self::TooManyRedirects | Self::Request(_) => {
                StatusCode::BAD_GATEWAY
            }
        }
    }
    fn code(&self) -> Option<&'static str> {
        Some(match self {
            Self::InvalidUrl(_) => "outbound_invalid_url",
            Self::Blocked(_) => "outbound_address_blocked",
            Self::Timeout => "outbound_timeout",
            Self::TooLarge { .. } => "outbound_response_too_large",
            Self::TooManyRedirects => "outbound_too_many_redirects",
            Self::Request(_) => "outbound_failed",
            Self::Setup(_) => return None,
        })
    }
}

impl OutboundError {
    /// Classifies a reqwest error, finding a guard refusal anywhere in its
    /// source chain (the resolver and the redirect policy put it there).
    fn from_reqwest(err: reqwest::Error) -> Self {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&err);
        while let Some(e) = source {
            if let Some(blocked) = e.downcast_ref::<BlockedAddress>() {
                return Self::Blocked(blocked.clone());
            }
            if e.downcast_ref::<TooManyRedirects>().is_some() {
                return Self::TooManyRedirects;
            }
            source = e.source();
        }
        if err.is_timeout() {
            Self::Timeout
        } else {
            Self::Request(err)
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("too many redirects")]
struct TooManyRedirects;

/// Both outbound clients, built once at start-up and shared (cheap to clone).
#[derive(Clone, Debug)]
pub struct Outbound {
    guarded: OutboundClient,
    trusted: OutboundClient,
}

impl Outbound {
    pub fn new(config: &OutboundConfig) -> Result<Self, OutboundError> {
        let guard = Arc::new(AddressGuard::new(config.allow.clone()));
        Ok(Self {
            guarded: OutboundClient::build(config, Some(guard))?,
            trusted: OutboundClient::build(config, None)?,
        })
    }

    /// For URLs that come from API input: the address guard applies.
    pub fn guarded(&self) -> &OutboundClient {
        &self.guarded
    }

    /// For URLs from the operator's environment: no address guard.
    pub fn trusted(&self) -> &OutboundClient {
        &self.trusted
    }
}

/// The rustls client configuration every outbound connection uses: the ring
/// provider, Mozilla's roots, HTTP/1.1.
pub fn tls_config() -> Result<rustls::ClientConfig, OutboundError> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| OutboundError::Setup(e.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tls)
}

/// A configured client; [`OutboundClient::request`] starts a request.
#[derive(Clone, Debug)]
pub struct OutboundClient {
    client: reqwest::Client,
    guard: Option<Arc<AddressGuard>>,
    max_response_bytes: usize,
}

impl OutboundClient {
    fn build(
        config: &OutboundConfig,
        guard: Option<Arc<AddressGuard>>,
    ) -> Result<Self, OutboundError> {
        let max_redirects = config.max_redirects;
        let redirect_guard = guard.clone();
        let policy = redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > max_redirects {
                return attempt.error(TooManyRedirects);
            }
            if let Some(guard) = &redirect_guard
                && let Err(err) = check_url(attempt.url(), guard)
            {
                return match err {
                    OutboundError::Blocked(blocked) => attempt.error(blocked),
                    other => attempt.error(other.to_string()),
                };
            }
            attempt.follow()
        });
        let mut builder = reqwest::Client::builder()
            .tls_backend_preconfigured(tls_config()?)
            .no_proxy()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            .redirect(policy)
            .user_agent(concat!("stoa/", env!("CARGO_PKG_VERSION")));
        if let Some(guard) = &guard {
            builder = builder.dns_resolver(Arc::new(GuardedResolver::new(guard.clone())));
        }
        let client = builder
            .build()
            .map_err(|e| OutboundError::Setup(e.to_string()))?;
        Ok(Self {
            client,
            guard,
            max_response_bytes: config.max_response_bytes,
        })
    }

    /// The underlying reqwest client, for callers that need streaming (object
    /// storage). Requests sent through it directly skip the URL check and the
    /// response bound, so use it for trusted addresses only.
    pub fn raw(&self) -> &reqwest::Client {
        &self.client
    }

    /// Starts a request to `url`, refusing a malformed URL, a scheme other
    /// than http(s) and (guarded client) a literal IP the guard refuses.
    pub fn request(&self, method: Method, url: &str) -> Result<OutboundRequest, OutboundError> {
        let url = Url::parse(url).map_err(|e| OutboundError::InvalidUrl(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(OutboundError::InvalidUrl(format!(
                "scheme `{}` is not allowed",
                url.scheme()
            )));
        }
        if url.host().is_none() {
            return Err(OutboundError::InvalidUrl("the URL has no host".into()));
        }
        if let Some(guard) = &self.guard {
            check_url(&url, guard)?;
        }
        Ok(OutboundRequest {
            builder: self.client.request(method, url),
            max_response_bytes: self.max_response_bytes,
        })
    }

    pub fn get(&self, url: &str) -> Result<OutboundRequest, OutboundError> {
        self.request(Method::GET, url)
    }

    pub fn post(&self, url: &str) -> Result<OutboundRequest, OutboundError> {
        self.request(Method::POST, url)
    }
}

/// Checks a literal IP host against the guard (names are checked by the
/// resolver when the connection is made).
fn check_url(url: &Url, guard: &AddressGuard) -> Result<(), OutboundError> {
    let host = url.host_str().unwrap_or_default();
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
        Some(url::Host::Domain(_)) => None,
        None => return Err(OutboundError::InvalidUrl("the URL has no host".into())),
    };
    match ip {
        Some(ip) => guard.check(host, ip).map_err(OutboundError::Blocked),
        None => Ok(()),
    }
}

/// A request being built; [`OutboundRequest::send`] sends it and reads the
/// bounded response.
#[derive(Debug)]
pub struct OutboundRequest {
    builder: RequestBuilder,
    max_response_bytes: usize,
}

impl OutboundRequest {
    /// Adjusts the request (headers, body, auth) with reqwest's builder.
    pub fn with(mut self, f: impl FnOnce(RequestBuilder) -> RequestBuilder) -> Self {
        self.builder = f(self.builder);
        self
    }

    pub fn header(self, name: &str, value: &str) -> Self {
        self.with(|b| b.header(name, value))
    }

    /// A JSON body.
    pub fn json(self, body: &serde_json::Value) -> Self {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        self.with(|b| {
            b.header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes)
        })
    }

    /// A lower response bound than the configured one for this request.
    pub fn max_response_bytes(mut self, limit: usize) -> Self {
        self.max_response_bytes = self.max_response_bytes.min(limit);
        self
    }

    /// Sends the request and reads the body, failing with
    /// [`OutboundError::TooLarge`] as soon as it passes the bound.
    pub async fn send(self) -> Result<OutboundResponse, OutboundError> {
        let limit = self.max_response_bytes;
        let response = self
            .builder
            .send()
            .await
            .map_err(OutboundError::from_reqwest)?;
        if response
            .content_length()
            .is_some_and(|len| len > limit as u64)
        {
            return Err(OutboundError::TooLarge { limit });
        }
        let status = response.status();
        let headers = response.headers().clone();
        let url = response.url().clone();
        let mut body = BytesMut::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(OutboundError::from_reqwest)?;
            if body.len() + chunk.len() > limit {
                return Err(OutboundError::TooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(OutboundResponse {
            status: status.as_u16(),
            headers,
            url,
            body: body.freeze(),
        })
    }
}

/// A response read whole (within the bound).
#[derive(Debug, Clone)]
pub struct OutboundResponse {
    pub status: u16,
    pub headers: HeaderMap,
    /// The final URL, after redirects.
    pub url: Url,
    pub body: Bytes,
}

impl OutboundResponse {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AppError;

    #[test]
    fn errors_map_to_statuses_and_codes_without_internal_detail() {
        let blocked = OutboundError::Blocked(BlockedAddress {
            host: "intranet.example".into(),
            addr: std::net::IpAddr::from([10, 1, 2, 3]),
        });
        for (err, status, code) in [
            (
                OutboundError::InvalidUrl("x".into()),
                400,
                Some("outbound_invalid_url"),
            ),
            (blocked, 400, Some("outbound_address_blocked")),
            (OutboundError::Timeout, 504, Some("outbound_timeout")),
            (
                OutboundError::TooLarge { limit: 5 },
                502,
                Some("outbound_response_too_large"),
            ),
            (
                OutboundError::TooManyRedirects,
                502,
                Some("outbound_too_many_redirects"),
            ),
            (OutboundError::Setup("tls".into()), 500, None),
        ] {
            let app = AppError::from_api(err);
            assert_eq!(app.status().as_u16(), status);
            assert_eq!(app.code(), code);
            assert!(!app.message().contains("10.1.2.3"), "{}", app.message());
        }
    }

    #[test]
    fn config_reads_the_allowlist_and_timeouts() {
        let vars: std::collections::HashMap<String, String> = [
            ("STOA_OUTBOUND_ALLOW", "10.0.0.0/8, ,fd00::/8"),
            ("STOA_OUTBOUND_TIMEOUT_MS", "1500"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let cfg = OutboundConfig::from_env(&Env(&vars)).unwrap_or_default();
        assert_eq!(cfg.allow.len(), 2);
        assert_eq!(cfg.timeout, Duration::from_millis(1500));
        assert_eq!(cfg.connect_timeout, Duration::from_secs(5));
    }
}
