//! Rate limiting: fixed-window counters with an optional block period, behind a
//! trait so a shared backend (Redis) can replace the in-process default when
//! several servers share the load.
//!
//! Endpoints decide what counts. Counting is a reservation: `record` checks and
//! counts in one step under the lock, so concurrent requests can never all pass
//! a check made before any of them is counted. An endpoint that only wants to
//! count failures (login) reserves first and gives the slot back with
//! `release` (or `reset`) once the attempt turned out to succeed; reset and
//! refresh simply keep every reservation.
//!
//! [`Layers`] reserves several keys at once and [`Quota`] is what the client is
//! told: `X-RateLimit-Limit` and `X-RateLimit-Remaining` on every response of a
//! limited endpoint, plus `Retry-After` and `X-RateLimit-Reset` on a 429.

mod memory;
mod quota;

use std::str::FromStr;
use std::time::Duration;

use crate::error::AppError;

pub use memory::MemoryRateLimiter;
pub use quota::{Layers, Quota};

/// `X-RateLimit-Limit`: the limit of the tightest layer.
pub const LIMIT_HEADER: &str = "x-ratelimit-limit";
/// `X-RateLimit-Remaining`: events left in the tightest layer's window.
pub const REMAINING_HEADER: &str = "x-ratelimit-remaining";
/// `X-RateLimit-Reset` (on a 429): when the refusing layer frees, as Unix
/// seconds; `Retry-After` says the same as a delay.
pub const RESET_HEADER: &str = "x-ratelimit-reset";

/// `limit` events per `window`; once exceeded the key stays blocked for `block`
/// (at least until the window ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    pub limit: u32,
    pub window: Duration,
    pub block: Duration,
}

impl Rule {
    pub const fn per_minute(limit: u32) -> Self {
        Self {
            limit,
            window: Duration::from_secs(60),
            block: Duration::from_secs(60),
        }
    }
}

/// Parses `N` (per 60 s) or `N/SECONDS`, as the `RATE_LIMIT_*` variables take.
impl FromStr for Rule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (limit, secs) = match s.split_once('/') {
            Some((n, secs)) => (n, secs),
            None => (s, "60"),
        };
        let limit: u32 = limit
            .trim()
            .parse()
            .map_err(|_| format!("expected `N` or `N/SECONDS`, got `{s}`"))?;
        let secs: u64 = secs
            .trim()
            .parse()
            .map_err(|_| format!("expected `N` or `N/SECONDS`, got `{s}`"))?;
        if limit == 0 || secs == 0 {
            return Err("limit and window must be positive".into());
        }
        Ok(Self {
            limit,
            window: Duration::from_secs(secs),
            block: Duration::from_secs(secs),
        })
    }
}

/// Whether an event may proceed, or how long to wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allowed { remaining: u32 },
    Limited { retry_after: Duration },
}

impl Decision {
    /// `Err(429)` with `Retry-After` when limited.
    pub fn into_result(self) -> Result<(), AppError> {
        match self {
            Decision::Allowed { .. } => Ok(()),
            Decision::Limited { retry_after } => {
                Err(AppError::too_many_requests(retry_after.as_secs().max(1)).ok_false())
            }
        }
    }
}

/// A rate-limit store. Keys are opaque strings such as `login:ip:10.0.0.1`.
pub trait RateLimiter: Send + Sync {
    /// Whether `key` is currently over its limit, without counting anything.
    fn check(&self, key: &str, rule: &Rule) -> Decision;
    /// Counts one event for `key`.
    fn record(&self, key: &str, rule: &Rule) -> Decision;
    /// Forgets `key` (e.g. after a successful login).
    fn reset(&self, key: &str);
    /// Gives back one event counted by `record` in the current window (an
    /// attempt that turned out not to count, e.g. a correct password). Lifts a
    /// block that the given-back event had caused.
    fn release(&self, key: &str, rule: &Rule);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rules() {
        assert_eq!("5".parse::<Rule>(), Ok(Rule::per_minute(5)));
        let r: Rule = "3/300".parse().unwrap_or(Rule::per_minute(1));
        assert_eq!((r.limit, r.window.as_secs()), (3, 300));
        assert!("0".parse::<Rule>().is_err());
        assert!("x/1".parse::<Rule>().is_err());
    }
}
