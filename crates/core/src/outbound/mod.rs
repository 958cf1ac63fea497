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
//! stack), the Mozilla root certificates, and three timeouts rather than one
//! total: connect, first byte (until the response head) and idle (the longest
//! pause between body chunks), so a model provider may stream for minutes
//! while a silent peer is dropped quickly. The body is bounded
//! (`STOA_OUTBOUND_MAX_RESPONSE_BYTES`) whether it is read whole
//! ([`OutboundRequest::send`], [`OutboundRequest::send_json`] for a typed
//! answer) or as it arrives ([`OutboundRequest::send_streaming`]). Request
//! bodies are typed ([`OutboundRequest::json`] takes any `Serialize`);
//! webhooks are signed with [`WebhookSigner`] ([`signing`] documents the
//! headers and how receivers verify). Only `http` and `https` URLs are
//! accepted; proxies from the environment are ignored. The address guard
//! applies to every way of sending: it lives in the guarded client's
//! resolver and redirect policy, below all of them.

mod client;
mod config;
mod error;
pub mod guard;
mod request;
pub mod signing;

pub use client::{Outbound, OutboundClient, tls_config};
pub use config::OutboundConfig;
pub use error::OutboundError;
pub use guard::{AddressGuard, BlockedAddress, Cidr, GuardedResolver};
pub use request::{OutboundRequest, OutboundResponse, OutboundStream};
pub use signing::WebhookSigner;
