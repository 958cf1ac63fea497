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
//! limited endpoint, plus `Retry-After` on a 429.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_web::HttpResponse;
use actix_web::http::header::{HeaderName, HeaderValue};

use crate::error::AppError;

/// `X-RateLimit-Limit`: the limit of the tightest layer.
pub const LIMIT_HEADER: &str = "x-ratelimit-limit";
/// `X-RateLimit-Remaining`: events left in the tightest layer's window.
pub const REMAINING_HEADER: &str = "x-ratelimit-remaining";

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

    fn release(&self, key: &str, rule: &Rule) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let Some(bucket) = buckets.get_mut(key) else {
            return;
        };
        if now.duration_since(bucket.window_start) >= rule.window || bucket.count == 0 {
            return;
        }
        bucket.count -= 1;
        if bucket.count < rule.limit {
            // The block came from reaching the limit, which no longer holds.
            bucket.blocked_until = None;
            bucket.expires = bucket.window_start + rule.window;
        }
    }
}

/// What a client is told about a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    pub limit: u32,
    pub remaining: u32,
    /// Set when the request was refused.
    pub retry_after: Option<Duration>,
}

impl Quota {
    pub fn of(decision: Decision, rule: &Rule) -> Self {
        match decision {
            Decision::Allowed { remaining } => Self {
                limit: rule.limit,
                remaining,
                retry_after: None,
            },
            Decision::Limited { retry_after } => Self {
                limit: rule.limit,
                remaining: 0,
                retry_after: Some(retry_after),
            },
        }
    }

    /// The quota to report of two layers: a refusal (the longer wait), else
    /// the one with fewer events left (the smaller limit on a tie).
    pub fn tighter(self, other: Quota) -> Quota {
        match (self.retry_after, other.retry_after) {
            (Some(a), Some(b)) => {
                if b > a {
                    other
                } else {
                    self
                }
            }
            (Some(_), None) => self,
            (None, Some(_)) => other,
            (None, None) => {
                if (other.remaining, other.limit) < (self.remaining, self.limit) {
                    other
                } else {
                    self
                }
            }
        }
    }

    fn header_pairs(&self) -> [(HeaderName, HeaderValue); 2] {
        [
            (
                HeaderName::from_static(LIMIT_HEADER),
                HeaderValue::from(self.limit),
            ),
            (
                HeaderName::from_static(REMAINING_HEADER),
                HeaderValue::from(self.remaining),
            ),
        ]
    }

    /// Adds the quota headers to a response.
    pub fn apply(&self, res: &mut HttpResponse) {
        for (name, value) in self.header_pairs() {
            res.headers_mut().insert(name, value);
        }
    }

    /// Adds the quota headers to an error response.
    pub fn apply_to_error(&self, err: AppError) -> AppError {
        self.header_pairs()
            .into_iter()
            .fold(err, |err, (name, value)| {
                err.with_header(name, value.to_str().unwrap_or("0").to_string())
            })
    }

    /// 429 `{ok:false,error}` with `Retry-After` and the quota headers.
    pub fn too_many_requests(&self) -> AppError {
        let secs = self.retry_after.map_or(1, |d| d.as_secs().max(1));
        self.apply_to_error(AppError::too_many_requests(secs).ok_false())
    }

    /// Puts the quota headers on whatever a handler answered.
    pub fn attach(
        quota: Option<Quota>,
        result: Result<HttpResponse, AppError>,
    ) -> Result<HttpResponse, AppError> {
        let Some(quota) = quota else {
            return result;
        };
        match result {
            Ok(mut res) => {
                quota.apply(&mut res);
                Ok(res)
            }
            Err(err) => Err(quota.apply_to_error(err)),
        }
    }
}

/// Several keys limited together (e.g. per address and per account).
pub struct Layers<'a> {
    limiter: &'a dyn RateLimiter,
    layers: Vec<(String, Rule)>,
}

impl<'a> Layers<'a> {
    pub fn new(limiter: &'a dyn RateLimiter) -> Self {
        Self {
            limiter,
            layers: Vec::new(),
        }
    }

    pub fn layer(mut self, key: impl Into<String>, rule: Rule) -> Self {
        self.layers.push((key.into(), rule));
        self
    }

    /// The quota now, counting nothing.
    pub fn peek(&self) -> Option<Quota> {
        self.layers
            .iter()
            .map(|(key, rule)| Quota::of(self.limiter.check(key, rule), rule))
            .reduce(Quota::tighter)
    }

    /// Counts one event in every layer, atomically per layer. When a layer
    /// refuses, the layers already counted are given back and the refusal is
    /// the error (429 with headers).
    pub fn reserve(&self) -> Result<Option<Quota>, AppError> {
        let mut quota: Option<Quota> = None;
        for (n, (key, rule)) in self.layers.iter().enumerate() {
            let decision = self.limiter.record(key, rule);
            let this = Quota::of(decision, rule);
            if let Decision::Limited { .. } = decision {
                for (key, rule) in &self.layers[..n] {
                    self.limiter.release(key, rule);
                }
                return Err(this.too_many_requests());
            }
            quota = Some(match quota {
                Some(q) => q.tighter(this),
                None => this,
            });
        }
        Ok(quota)
    }

    /// Gives back the event [`Layers::reserve`] counted in every layer.
    pub fn release(&self) {
        for (key, rule) in &self.layers {
            self.limiter.release(key, rule);
        }
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
    fn release_gives_back_a_slot_and_lifts_the_block() {
        let rl = MemoryRateLimiter::new(true);
        let rule = Rule::per_minute(2);
        assert!(matches!(
            rl.record("k", &rule),
            Decision::Allowed { remaining: 1 }
        ));
        assert!(matches!(
            rl.record("k", &rule),
            Decision::Allowed { remaining: 0 }
        ));
        assert!(matches!(rl.check("k", &rule), Decision::Limited { .. }));
        rl.release("k", &rule);
        assert!(matches!(
            rl.check("k", &rule),
            Decision::Allowed { remaining: 1 }
        ));
        rl.release("k", &rule);
        rl.release("k", &rule);
        assert!(matches!(
            rl.check("k", &rule),
            Decision::Allowed { remaining: 2 }
        ));
    }

    #[test]
    fn layers_reserve_all_or_nothing() {
        let rl = MemoryRateLimiter::new(true);
        let wide = Rule::per_minute(10);
        let narrow = Rule::per_minute(1);
        let layers = Layers::new(&rl).layer("wide", wide).layer("narrow", narrow);
        let quota = layers.reserve().ok().flatten();
        assert_eq!(quota.map(|q| (q.limit, q.remaining)), Some((1, 0)));
        assert!(layers.reserve().is_err());
        // The refused attempt did not use up the wide layer.
        assert!(matches!(
            rl.check("wide", &wide),
            Decision::Allowed { remaining: 9 }
        ));
        layers.release();
        assert!(matches!(
            rl.check("wide", &wide),
            Decision::Allowed { remaining: 10 }
        ));
        assert_eq!(layers.peek().map(|q| q.remaining), Some(1));
    }

    #[test]
    fn concurrent_reservations_never_exceed_the_limit() {
        let rl = std::sync::Arc::new(MemoryRateLimiter::new(true));
        let rule = Rule::per_minute(5);
        let allowed: usize = (0..8)
            .map(|_| {
                let rl = rl.clone();
                std::thread::spawn(move || {
                    (0..20)
                        .filter(|_| matches!(rl.record("k", &rule), Decision::Allowed { .. }))
                        .count()
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap_or(0))
            .sum();
        assert_eq!(allowed, 5);
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
