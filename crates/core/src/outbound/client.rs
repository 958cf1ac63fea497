//! The two configured clients (guarded and trusted) and how a request to a
//! URL is started and checked.

use std::sync::Arc;

use reqwest::{Method, Url, redirect};

use super::error::TooManyRedirects;
use super::request::Limits;
use super::{AddressGuard, GuardedResolver, OutboundConfig, OutboundError, OutboundRequest};

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
    limits: Limits,
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
            limits: Limits {
                max_response_bytes: config.max_response_bytes,
                first_byte_timeout: config.first_byte_timeout,
                idle_timeout: config.idle_timeout,
                deadline: None,
            },
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
        Ok(OutboundRequest::new(
            self.client.request(method, url),
            self.limits,
        ))
    }

    pub fn get(&self, url: &str) -> Result<OutboundRequest, OutboundError> {
        self.request(Method::GET, url)
    }

    pub fn post(&self, url: &str) -> Result<OutboundRequest, OutboundError> {
        self.request(Method::POST, url)
    }

    pub fn put(&self, url: &str) -> Result<OutboundRequest, OutboundError> {
        self.request(Method::PUT, url)
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
