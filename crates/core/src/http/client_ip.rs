//! The client's IP address for rate limiting.
//!
//! By default it is the TCP peer: forwarding headers are trivially spoofed, so
//! they are trusted only when the operator says how many proxies sit in front
//! (`RATE_LIMIT_TRUST_PROXY_DEPTH`). With depth `n`, the address is the `n`-th
//! entry from the right of `X-Forwarded-For` (the one the outermost trusted
//! proxy saw); with fewer entries, the left-most one.

use std::net::IpAddr;

use actix_web::HttpRequest;

/// How many reverse proxies in front of stoa append to `X-Forwarded-For`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxyDepth(pub usize);

/// The client IP as text, or `None` when neither peer nor header tells.
pub fn client_ip(req: &HttpRequest, depth: TrustedProxyDepth) -> Option<String> {
    if depth.0 > 0
        && let Some(xff) = req
            .headers()
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
    {
        let hops: Vec<&str> = xff
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if !hops.is_empty() {
            let index = hops.len().saturating_sub(depth.0);
            if let Ok(ip) = hops[index].parse::<IpAddr>() {
                return Some(ip.to_string());
            }
        }
    }
    req.peer_addr().map(|addr| addr.ip().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    #[test]
    fn peer_unless_depth_configured() {
        let req = TestRequest::default()
            .peer_addr("10.0.0.9:5000".parse().unwrap_or_else(|_| unreachable!()))
            .insert_header(("x-forwarded-for", "1.1.1.1, 2.2.2.2"))
            .to_http_request();
        assert_eq!(
            client_ip(&req, TrustedProxyDepth(0)).as_deref(),
            Some("10.0.0.9")
        );
        assert_eq!(
            client_ip(&req, TrustedProxyDepth(1)).as_deref(),
            Some("2.2.2.2")
        );
        assert_eq!(
            client_ip(&req, TrustedProxyDepth(2)).as_deref(),
            Some("1.1.1.1")
        );
        assert_eq!(
            client_ip(&req, TrustedProxyDepth(5)).as_deref(),
            Some("1.1.1.1")
        );
    }
}
