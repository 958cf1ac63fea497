//! The in-process rate-limit store (the default when one server carries the
//! load).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use super::{Decision, RateLimiter, Rule};

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

#[cfg(test)]
mod tests {
    use super::*;

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
