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

mod client;
mod config;
mod error;
pub mod guard;
mod request;

pub use client::{Outbound, OutboundClient, tls_config};
pub use config::OutboundConfig;
pub use error::OutboundError;
pub use guard::{AddressGuard, BlockedAddress, Cidr, GuardedResolver};
pub use request::{OutboundRequest, OutboundResponse};
