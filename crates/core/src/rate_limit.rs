//! Rate limiting: fixed-window counters with an optional block period, behind a
//! trait so a shared backend (Redis) can replace the in-process default when
//! several servers share the load.
//!
//! Endpoints decide what counts: login checks first and records only failed
//! attempts (a busy office behind one address is never locked out by its own
//! successful logins); reset and refresh record every request.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::AppError;

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
}

#[derive(Debug)]
struct Bucket {
    window_start: Instant,
    count: u32,
    blocked_until: Option<Instant>,
    /// When this bucket can be forgotten.
    expires: Instant,
}

/// The in-process store: one mutex-guarded map, pruned as it grows.
pub struct MemoryRateLimiter {
    buckets: Mutex<HashMap<String, Bucket>>,
    enabled: bool,
}

/// Above this many keys, expired buckets are pruned on the next write.
const PRUNE_THRESHOLD: usize = 10_000;

impl MemoryRateLimiter {
    pub fn new(enabled: bool) -> Self {
        Self {
            buckets: Mutex::new(HashMap::new()),
            enabled,
        }
    }

    fn state(bucket: &Bucket, rule: &Rule, now: Instant) -> Decision {
        if let Some(until) = bucket.blocked_until
            && until > now
        {
            return Decision::Limited {
                retry_after: until - now,
            };
        }
        if now.duration_since(bucket.window_start) >= rule.window {
            return Decision::Allowed {
                remaining: rule.limit,
            };
        }
        if bucket.count >= rule.limit {
            let window_end = bucket.window_start + rule.window;
            return Decision::Limited {
                retry_after: window_end.saturating_duration_since(now),
            };
        }
        Decision::Allowed {
            remaining: rule.limit - bucket.count,
        }
    }
}

impl RateLimiter for MemoryRateLimiter {
    fn check(&self, key: &str, rule: &Rule) -> Decision {
        if !self.enabled {
            return Decision::Allowed {
                remaining: rule.limit,
            };
        }
        let now = Instant::now();
        let buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        match buckets.get(key) {
            Some(bucket) => Self::state(bucket, rule, now),
            None => Decision::Allowed {
                remaining: rule.limit,
            },
        }
    }

    fn record(&self, key: &str, rule: &Rule) -> Decision {
        if !self.enabled {
            return Decision::Allowed {
                remaining: rule.limit,
            };
        }
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= PRUNE_THRESHOLD {
            buckets.retain(|_, b| b.expires > now);
        }
        let bucket = buckets.entry(key.to_string()).or_insert(Bucket {
            window_start: now,
            count: 0,
            blocked_until: None,
            expires: now + rule.window,
        });
        if let Decision::Limited { retry_after } = Self::state(bucket, rule, now) {
            return Decision::Limited { retry_after };
        }
        if now.duration_since(bucket.window_start) >= rule.window {
            bucket.window_start = now;
            bucket.count = 0;
            bucket.blocked_until = None;
        }
        bucket.count += 1;
        bucket.expires = bucket.window_start + rule.window;
        if bucket.count > rule.limit {
            let until = now + rule.block.max(rule.window);
            bucket.blocked_until = Some(until);
            bucket.expires = until;
            return Decision::Limited {
                retry_after: until - now,
            };
        }
        if bucket.count == rule.limit {
            // The next event would exceed the limit: block from now on.
            let until = (bucket.window_start + rule.window).max(now + rule.block);
            bucket.blocked_until = Some(until);
            bucket.expires = until;
        }
        Decision::Allowed {
            remaining: rule.limit - bucket.count,
        }
    }

    fn reset(&self, key: &str) {
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        buckets.remove(key);
    }
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

    #[test]
    fn blocks_after_limit_and_reset_clears() {
        let rl = MemoryRateLimiter::new(true);
        let rule = Rule::per_minute(3);
        for _ in 0..3 {
            assert!(matches!(rl.check("k", &rule), Decision::Allowed { .. }));
            assert!(matches!(rl.record("k", &rule), Decision::Allowed { .. }));
        }
        assert!(matches!(rl.check("k", &rule), Decision::Limited { .. }));
        assert!(matches!(rl.record("k", &rule), Decision::Limited { .. }));
        assert!(matches!(rl.check("other", &rule), Decision::Allowed { .. }));
        rl.reset("k");
        assert!(matches!(rl.check("k", &rule), Decision::Allowed { .. }));
    }

    #[test]
    fn disabled_never_limits() {
        let rl = MemoryRateLimiter::new(false);
        let rule = Rule::per_minute(1);
        for _ in 0..10 {
            assert!(matches!(rl.record("k", &rule), Decision::Allowed { .. }));
        }
    }
}
