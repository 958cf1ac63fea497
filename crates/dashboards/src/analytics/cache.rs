//! Kept widget answers: a repeated widget data request is answered from
//! memory after one cheap statement, while nothing it aggregated changed.
//!
//! A source that names its read model (`AnalyticsSource::read_model`, e.g.
//! `customers.deals`) has statement-level triggers bumping `read_versions`
//! (`<name>@<tenant>`) in the transaction of every write to its table. The
//! aggregate statement selects the tenant's version beside its result, so
//! both come from one snapshot; versions only grow, so when a later check
//! reads the same version, no write to that tenant's rows committed in
//! between and the kept result is still the result. Unlike the reference
//! (120 s of possibly stale answers), a kept answer is never stale.
//!
//! The key is the compiled statement and every bound value: tenant, visible
//! organizations, filters and the resolved date range (presets resolve to
//! whole days), so two callers share an answer only when they would run the
//! identical statement. Authorization runs before the cache is consulted.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use sha2::{Digest, Sha256};

use super::compile::Bind;

/// Memory kept per process for answers (oldest out first).
const MAX_BYTES: usize = 8 * 1024 * 1024;

/// The statement's answer, as read.
#[derive(Clone, Debug)]
pub struct Answer {
    pub value: Option<String>,
    pub previous: Option<String>,
    pub groups: Option<String>,
}

impl Answer {
    fn size(&self) -> usize {
        [&self.value, &self.previous, &self.groups]
            .iter()
            .map(|s| s.as_ref().map_or(0, String::len))
            .sum::<usize>()
            + 96
    }
}

struct Entry {
    version: i64,
    answer: Answer,
    size: usize,
    stamp: u64,
}

#[derive(Default)]
struct Kept {
    entries: HashMap<[u8; 32], Entry>,
    bytes: usize,
    clock: u64,
}

static KEPT: Mutex<Option<Kept>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Kept) -> R) -> R {
    let mut guard = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    f(guard.get_or_insert_with(Kept::default))
}

/// The key of a compiled statement with its binds.
pub fn key(sql: &str, binds: &[Bind]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(sql.as_bytes());
    hash.update([0]);
    hash.update(format!("{binds:?}").as_bytes());
    hash.finalize().into()
}

/// The kept answer and the version it was computed at.
pub fn get(key: &[u8; 32]) -> Option<(i64, Answer)> {
    with(|kept| {
        kept.clock += 1;
        let clock = kept.clock;
        kept.entries.get_mut(key).map(|e| {
            e.stamp = clock;
            (e.version, e.answer.clone())
        })
    })
}

/// Keeps `answer`, computed at `version`, evicting the least recently used
/// answers past the memory bound.
pub fn put(key: [u8; 32], version: i64, answer: Answer) {
    let size = answer.size();
    if size > MAX_BYTES / 8 {
        return;
    }
    with(|kept| {
        kept.clock += 1;
        let entry = Entry {
            version,
            answer,
            size,
            stamp: kept.clock,
        };
        if let Some(old) = kept.entries.insert(key, entry) {
            kept.bytes -= old.size;
        }
        kept.bytes += size;
        while kept.bytes > MAX_BYTES {
            let Some(oldest) = kept
                .entries
                .iter()
                .min_by_key(|(_, e)| e.stamp)
                .map(|(k, _)| *k)
            else {
                break;
            };
            if let Some(old) = kept.entries.remove(&oldest) {
                kept.bytes -= old.size;
            }
        }
    });
}

/// Drops a kept answer (its version moved).
pub fn forget(key: &[u8; 32]) {
    with(|kept| {
        if let Some(old) = kept.entries.remove(key) {
            kept.bytes -= old.size;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(n: usize) -> Answer {
        Answer {
            value: Some("x".repeat(n)),
            previous: None,
            groups: None,
        }
    }

    #[test]
    fn keys_differ_by_bound_value() {
        let a = key("SELECT $1", &[Bind::Int(1)]);
        let b = key("SELECT $1", &[Bind::Int(2)]);
        assert_ne!(a, b);
        assert_eq!(a, key("SELECT $1", &[Bind::Int(1)]));
    }

    #[test]
    fn memory_stays_bounded_and_recent_answers_stay() {
        let big = MAX_BYTES / 16;
        let first = key("first", &[]);
        put(first, 1, answer(big));
        for i in 0..40 {
            // Reading `first` keeps it recent.
            assert!(get(&first).is_some(), "round {i}");
            put(key("filler", &[Bind::Int(i)]), 1, answer(big));
        }
        with(|kept| assert!(kept.bytes <= MAX_BYTES, "{}", kept.bytes));
        assert_eq!(get(&first).map(|(v, _)| v), Some(1));
        forget(&first);
        assert!(get(&first).is_none());
    }
}
