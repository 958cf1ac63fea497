//! The address guard: which IP addresses an outbound request built from API
//! input may reach.
//!
//! Loopback, link-local, private, shared (CGNAT), multicast, reserved and
//! unspecified addresses are refused unless an allowlist entry
//! (`STOA_OUTBOUND_ALLOW`) names them. The guard is applied after DNS
//! resolution by [`GuardedResolver`] (so a name that resolves to 127.0.0.1 is
//! refused, and the connection uses exactly the addresses that were checked:
//! no second lookup an attacker's DNS could answer differently), and to
//! literal IPs in the URL and in every redirect target by the client.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::str::FromStr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// An address block such as `10.0.0.0/8` or `fd00::/8` (a bare address is a
/// block of one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Whether `ip` lies in this block (an IPv4-mapped IPv6 address counts as
    /// its IPv4 address).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                prefix_eq(&net.octets(), &ip.octets(), self.prefix)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                prefix_eq(&net.octets(), &ip.octets(), self.prefix)
            }
            _ => false,
        }
    }
}

fn prefix_eq(a: &[u8], b: &[u8], prefix: u8) -> bool {
    let full = usize::from(prefix / 8);
    let rest = prefix % 8;
    if a.get(..full) != b.get(..full) {
        return false;
    }
    if rest == 0 {
        return true;
    }
    let mask = 0xffu8 << (8 - rest);
    match (a.get(full), b.get(full)) {
        (Some(x), Some(y)) => x & mask == y & mask,
        _ => false,
    }
}

impl FromStr for Cidr {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (addr, prefix) = match s.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (s, None),
        };
        let network: IpAddr = addr
            .parse()
            .map_err(|_| format!("`{s}` is not an IP address or CIDR block"))?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{s}`: the prefix length must be 0..={max}"))?,
        };
        Ok(Self {
            network: network.to_canonical(),
            prefix,
        })
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// Why an address was refused (found in a failed request's error chain).
/// The message names the host but not the address it resolved to, so an API
/// caller cannot map the internal network through it; log `addr` instead.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[error("`{host}` is not an allowed destination (private, loopback or other non-public address)")]
pub struct BlockedAddress {
    pub host: String,
    pub addr: IpAddr,
}

/// Decides which addresses requests from API input may reach.
#[derive(Clone, Debug, Default)]
pub struct AddressGuard {
    allow: Vec<Cidr>,
}

impl AddressGuard {
    /// A guard that additionally allows the given blocks.
    pub fn new(allow: Vec<Cidr>) -> Self {
        Self { allow }
    }

    /// `Ok` when `addr` is public or allowlisted.
    pub fn check(&self, host: &str, addr: IpAddr) -> Result<(), BlockedAddress> {
        let addr = addr.to_canonical();
        if !is_restricted(addr) || self.allow.iter().any(|c| c.contains(addr)) {
            Ok(())
        } else {
            Err(BlockedAddress {
                host: host.to_string(),
                addr,
            })
        }
    }
}

/// Addresses that are not on the public internet: loopback, private,
/// link-local, shared, multicast, reserved, unspecified, and IPv6 forms that
/// embed such an IPv4 address.
pub fn is_restricted(addr: IpAddr) -> bool {
    match addr.to_canonical() {
        IpAddr::V4(v4) => is_restricted_v4(v4),
        IpAddr::V6(v6) => is_restricted_v6(v6),
    }
}

fn is_restricted_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_unspecified()
        || a == 0 // "this network"
        || ip.is_loopback() // 127/8
        || ip.is_private() // 10/8, 172.16/12, 192.168/16
        || ip.is_link_local() // 169.254/16 (cloud metadata lives here)
        || (a == 100 && (64..128).contains(&b)) // 100.64/10 shared (CGNAT)
        || (a == 192 && b == 0 && c == 0) // 192.0.0/24 protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // 198.18/15 benchmarking
        || ip.is_multicast() // 224/4
        || a >= 240 // 240/4 reserved, broadcast
}

fn is_restricted_v6(ip: Ipv6Addr) -> bool {
    let seg = ip.segments();
    if ip.is_unspecified() || ip.is_loopback() || ip.is_multicast() {
        return true;
    }
    // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local (deprecated).
    if (seg[0] & 0xfe00) == 0xfc00 || (seg[0] & 0xffc0) == 0xfe80 || (seg[0] & 0xffc0) == 0xfec0 {
        return true;
    }
    let embedded = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    // 64:ff9b::/96 (NAT64) and ::a.b.c.d (IPv4-compatible) reach an IPv4 address.
    if (seg[0] == 0x64 && seg[1] == 0xff9b && seg[2..6] == [0, 0, 0, 0])
        || seg[..6] == [0, 0, 0, 0, 0, 0]
    {
        return is_restricted_v4(embedded(seg[6], seg[7]));
    }
    // 2002::/16 (6to4) embeds an IPv4 address in bits 16..48.
    if seg[0] == 0x2002 {
        return is_restricted_v4(embedded(seg[1], seg[2]));
    }
    false
}

/// A DNS resolver that drops addresses the guard refuses and fails the
/// lookup when none is left.
#[derive(Clone, Debug)]
pub struct GuardedResolver {
    guard: Arc<AddressGuard>,
}

impl GuardedResolver {
    pub fn new(guard: Arc<AddressGuard>) -> Self {
        Self { guard }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.guard.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let lookup = host.clone();
            // The system resolver blocks; run it off the async threads. Port 0
            // is replaced by the URL's port.
            let addrs: Vec<SocketAddr> =
                tokio::task::spawn_blocking(move || (lookup.as_str(), 0).to_socket_addrs())
                    .await??
                    .collect();
            let mut refused = None;
            let allowed: Vec<SocketAddr> = addrs
                .into_iter()
                .filter(|addr| match guard.check(&host, addr.ip()) {
                    Ok(()) => true,
                    Err(blocked) => {
                        refused.get_or_insert(blocked);
                        false
                    }
                })
                .collect();
            if allowed.is_empty() {
                return Err(match refused {
                    Some(blocked) => Box::new(blocked) as _,
                    None => format!("`{host}` did not resolve to any address").into(),
                });
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
    }

    #[test]
    fn restricted_ranges() {
        for addr in [
            "127.0.0.1",
            "127.255.0.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
        ] {
            assert!(is_restricted(ip(addr)), "{addr} should be restricted");
        }
        for addr in [
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_restricted(ip(addr)), "{addr} should be public");
        }
    }

    #[test]
    fn cidr_parsing_and_matching() {
        let c: Cidr = "10.0.0.0/8".parse().unwrap_or_else(|e| panic!("{e}"));
        assert!(c.contains(ip("10.200.1.1")));
        assert!(!c.contains(ip("11.0.0.1")));
        assert!(c.contains(ip("::ffff:10.0.0.7")));
        let one: Cidr = "127.0.0.1".parse().unwrap_or_else(|e| panic!("{e}"));
        assert!(one.contains(ip("127.0.0.1")));
        assert!(!one.contains(ip("127.0.0.2")));
        let v6: Cidr = "fd00::/8".parse().unwrap_or_else(|e| panic!("{e}"));
        assert!(v6.contains(ip("fd12::1")));
        assert!(!v6.contains(ip("fe80::1")));
        let odd: Cidr = "172.16.0.0/12".parse().unwrap_or_else(|e| panic!("{e}"));
        assert!(odd.contains(ip("172.31.0.1")));
        assert!(!odd.contains(ip("172.32.0.1")));
        for bad in ["", "10.0.0.0/33", "fd00::/129", "example.com", "10.0.0.0/x"] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn allowlist_opens_a_block() {
        let guard = AddressGuard::new(vec![Cidr {
            network: ip("127.0.0.0"),
            prefix: 8,
        }]);
        assert!(guard.check("h", ip("127.0.0.1")).is_ok());
        assert!(guard.check("h", ip("10.0.0.1")).is_err());
        assert!(guard.check("h", ip("93.184.216.34")).is_ok());
        assert!(AddressGuard::default().check("h", ip("127.0.0.1")).is_err());
    }
}
