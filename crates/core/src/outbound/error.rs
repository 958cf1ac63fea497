//! Why an outbound request failed, and the API answer for each reason.

use actix_web::http::StatusCode;

use super::BlockedAddress;
use crate::error::ApiError;

/// A failed outbound request.
#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    /// Not an absolute `http`/`https` URL with a host.
    #[error("invalid URL: {0}")]
    InvalidUrl(String),
    /// The address guard refused the destination (or a redirect's).
    #[error(transparent)]
    Blocked(BlockedAddress),
    /// The connect, first-byte or idle timeout (or the request's deadline) passed.
    #[error("the remote server did not answer in time")]
    Timeout,
    /// The request body could not be encoded (a map with non-string keys).
    #[error("the request body could not be encoded: {0}")]
    InvalidBody(String),
    /// [`OutboundRequest::send_json`](super::OutboundRequest::send_json): the
    /// remote answered outside 2xx.
    #[error("the remote server answered with status {status}")]
    Status { status: u16 },
    /// [`OutboundRequest::send_json`](super::OutboundRequest::send_json): the
    /// answer is not the JSON expected (the detail is for logs).
    #[error("the remote server's answer could not be read")]
    Decode(String),
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
            Self::Setup(_) | Self::InvalidBody(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::TooLarge { .. }
            | Self::TooManyRedirects
            | Self::Request(_)
            | Self::Status { .. }
            | Self::Decode(_) => StatusCode::BAD_GATEWAY,
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
            Self::Status { .. } => "outbound_status",
            Self::Decode(_) => "outbound_invalid_response",
            Self::Setup(_) | Self::InvalidBody(_) => return None,
        })
    }
}

impl OutboundError {
    /// Classifies a reqwest error, finding a guard refusal anywhere in its
    /// source chain (the resolver and the redirect policy put it there).
    pub(super) fn from_reqwest(err: reqwest::Error) -> Self {
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
pub(super) struct TooManyRedirects;

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
            (
                OutboundError::Status { status: 500 },
                502,
                Some("outbound_status"),
            ),
            (
                OutboundError::Decode("10.1.2.3 said".into()),
                502,
                Some("outbound_invalid_response"),
            ),
        ] {
            let app = AppError::from_api(err);
            assert_eq!(app.status().as_u16(), status);
            assert_eq!(app.code(), code);
            assert!(!app.message().contains("10.1.2.3"), "{}", app.message());
        }
    }
}
