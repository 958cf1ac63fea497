//! Reads that may lag, served by a streaming replica (`DATABASE_REPLICA_URL`).
//!
//! A few reads cost the most and tolerate being a moment behind: the action
//! log's list and CSV export, widget data, the attachments library. Their
//! handlers take [`Db::reader`] instead of the [`Db`] itself; everything
//! else reads the primary. `reader()` answers the replica's pools only when
//!
//! - a replica is configured,
//! - the current task is a request (the request middleware runs each in
//!   [`lagging_reads`]) that has run no command ([`note_write`]): a request
//!   that wrote reads its own writes (jobs and other work outside requests
//!   read the primary), and
//! - the replica is known to be at most `STOA_REPLICA_MAX_LAG_MS` behind.
//!
//! The lag is measured once a second by a task of its own, not by requests:
//! it samples the primary's WAL position (`pg_current_wal_lsn()`) and the
//! replica's replayed position (`pg_last_wal_replay_lsn()`); the replica's
//! lag is the age of the newest primary sample it has replayed past. The
//! routing is therefore at most the bound plus one sampling period (1 s)
//! behind the primary; a replica that stops replaying, disconnects or
//! cannot be asked is left alone until it has caught up again.
//!
//! Row-level security holds there as on the primary: the replica's pools
//! act as the same roles and carry the same per-connection tenant setting
//! (both are session state, which a hot standby allows).

use std::cell::Cell;
use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use diesel::QueryableByName;
use diesel::sql_types::{Nullable, Text};
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::{Db, DbError, pool, uncounted};
use crate::rls;

/// How often the lag is measured.
const PERIOD: Duration = Duration::from_secs(1);

/// A measurement older than this (the sampler stopped) counts as unknown.
const STALE_AFTER: Duration = Duration::from_secs(3);

/// Samples of the primary's position kept (a minute at one a second).
const SAMPLES: usize = 64;

/// Reads routed to the replica by this process, for `/metrics` and drills.
static REPLICA_READS: AtomicU64 = AtomicU64::new(0);

/// Reads routed to the replica by this process.
pub fn replica_reads_total() -> u64 {
    AtomicU64::load(&REPLICA_READS, Ordering::Relaxed)
}

tokio::task_local! {
    /// Whether the current request may read lagging data: it has not written.
    static LAGGING_OK: Cell<bool>;
}

/// Runs a request: its [`Db::reader`] reads may go to the replica until it
/// writes ([`note_write`]). Whether a request writes is not told by its
/// method (widget data is a POST that only reads), so the command bus,
/// which every tenant write goes through, says it.
pub fn lagging_reads<F: Future>(f: F) -> impl Future<Output = F::Output> {
    LAGGING_OK.scope(Cell::new(true), f)
}

/// Marks the current request as having written: its later reads, heavy ones
/// included, go to the primary. Called by the command bus.
pub fn note_write() {
    let _ = LAGGING_OK.try_with(|ok| ok.set(false));
}

fn lagging_ok() -> bool {
    LAGGING_OK.try_with(Cell::get).unwrap_or(false)
}

/// The replica's pools and what is known of its lag.
pub(crate) struct Replica {
    pool: Pool<AsyncPgConnection>,
    bypass_pool: Pool<AsyncPgConnection>,
    /// Settings held by the replica pool's connections (their ids are the
    /// replica pool's own, so they cannot share the primary's map).
    settings: Arc<Mutex<std::collections::HashMap<deadpool::managed::ObjectId, String>>>,
    max_lag: Duration,
    sampler: AtomicBool,
    state: Mutex<Lag>,
}

#[derive(Default)]
struct Lag {
    /// (when, the primary's WAL position then), oldest first.
    samples: VecDeque<(Instant, u64)>,
    /// The last measurement: when, and the lag (`None`: unknown or failed).
    measured: Option<(Instant, Option<Duration>)>,
}

impl Replica {
    pub(crate) fn new(url: &str, size: usize, max_lag: Duration) -> Result<Self, DbError> {
        Ok(Self {
            pool: pool(url, size, rls::APP_ROLE)?,
            bypass_pool: pool(url, size, rls::BYPASS_ROLE)?,
            settings: Arc::default(),
            max_lag,
            sampler: AtomicBool::new(false),
            state: Mutex::default(),
        })
    }

    fn lag(&self) -> Option<Duration> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match state.measured {
            Some((at, lag)) if at.elapsed() <= STALE_AFTER => lag,
            _ => None,
        }
    }

    fn fresh(&self) -> bool {
        self.lag().is_some_and(|lag| lag <= self.max_lag)
    }

    /// Records one measurement: the primary's position (sampled first) and
    /// the replica's replayed position, `None` when either failed.
    fn record(&self, primary: Option<u64>, replayed: Option<u64>) {
        let now = Instant::now();
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(lsn) = primary {
            state.samples.push_back((now, lsn));
            if state.samples.len() > SAMPLES {
                state.samples.pop_front();
            }
        }
        let lag = match (primary, replayed) {
            (Some(_), Some(replayed)) => state
                .samples
                .iter()
                .rev()
                .find(|(_, lsn)| *lsn <= replayed)
                .map(|(at, _)| now.duration_since(*at)),
            _ => None,
        };
        state.measured = Some((now, lag));
    }
}

#[derive(QueryableByName)]
struct Position {
    #[diesel(sql_type = Nullable<Text>)]
    lsn: Option<String>,
}

/// `16/B374D848` as a number.
fn parse_lsn(text: &str) -> Option<u64> {
    let (hi, lo) = text.split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

/// One position query, bounded by the period.
async fn position(pool: &Pool<AsyncPgConnection>, sql: &'static str) -> Option<u64> {
    let ask = async {
        let mut conn = pool.get().await.ok()?;
        let row: Position = diesel::sql_query(sql).get_result(&mut *conn).await.ok()?;
        row.lsn.as_deref().and_then(parse_lsn)
    };
    tokio::time::timeout(PERIOD, ask).await.ok().flatten()
}

/// Measures once a second while the replica is in use (ends with the last
/// [`Db`] holding it).
async fn sample(primary: Pool<AsyncPgConnection>, replica: Weak<Replica>) {
    let mut tick = tokio::time::interval(PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(r) = replica.upgrade() else {
            return;
        };
        let at = position(&primary, "SELECT pg_current_wal_lsn()::text AS lsn").await;
        // Not in recovery (the URL names a primary): it is the primary's own position.
        let replayed = position(
            &r.bypass_pool,
            "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() \
             ELSE pg_current_wal_lsn() END)::text AS lsn",
        )
        .await;
        r.record(at, replayed);
    }
}

impl Db {
    /// The handle for reads that tolerate a little lag (see the module
    /// documentation): the replica's pools when one is configured, fresh
    /// enough, and the current request may read lagging data; this handle
    /// otherwise. Writes through it fail (a hot standby is read-only):
    /// writers behind a read take [`Db::primary`].
    pub fn reader(&self) -> Db {
        let Some(replica) = &self.replica else {
            return self.clone();
        };
        if !replica.sampler.swap(true, Ordering::AcqRel) {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(uncounted(sample(
                        self.pool.clone(),
                        Arc::downgrade(replica),
                    )));
                }
                Err(_) => replica.sampler.store(false, Ordering::Release),
            }
        }
        if !lagging_ok() || !replica.fresh() {
            return self.clone();
        }
        REPLICA_READS.fetch_add(1, Ordering::Relaxed);
        Db {
            pool: replica.pool.clone(),
            bypass_pool: replica.bypass_pool.clone(),
            settings: replica.settings.clone(),
            replica: None,
            primary: Some(Arc::new(self.clone())),
            ..self.clone()
        }
    }

    /// The primary's handle (this one unless it is a [`Db::reader`] on the
    /// replica).
    pub fn primary(&self) -> Db {
        match &self.primary {
            Some(primary) => Db::clone(primary),
            None => self.clone(),
        }
    }

    /// Whether this handle reads the replica.
    pub fn is_replica(&self) -> bool {
        self.primary.is_some()
    }

    /// The replica's last measured lag (`None`: no replica, or unknown).
    pub fn replica_lag(&self) -> Option<Duration> {
        self.replica.as_ref().and_then(|r| r.lag())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsns_parse() {
        assert_eq!(parse_lsn("0/0"), Some(0));
        assert_eq!(parse_lsn("16/B374D848"), Some((0x16 << 32) | 0xB374_D848));
        assert_eq!(parse_lsn("nope"), None);
    }

    #[test]
    fn lag_is_the_age_of_the_newest_sample_replayed() {
        let r = Replica {
            pool: pool("postgres://x@127.0.0.1:1/none", 1, rls::APP_ROLE).unwrap(),
            bypass_pool: pool("postgres://x@127.0.0.1:1/none", 1, rls::BYPASS_ROLE).unwrap(),
            settings: Arc::default(),
            max_lag: Duration::from_millis(500),
            sampler: AtomicBool::new(true),
            state: Mutex::default(),
        };
        assert_eq!(r.lag(), None, "nothing measured yet");
        r.record(Some(100), Some(100));
        assert!(r.fresh(), "caught up");
        std::thread::sleep(Duration::from_millis(600));
        // The primary moved on; the replica still stands at 100, replayed
        // as of the first sample, 600 ms ago.
        r.record(Some(200), Some(100));
        assert!(r.lag().is_some_and(|l| l >= Duration::from_millis(600)));
        assert!(!r.fresh(), "beyond the bound");
        r.record(Some(200), Some(200));
        assert!(r.fresh(), "caught up again");
        r.record(Some(300), None);
        assert_eq!(r.lag(), None, "a failed measurement is unknown");
        r.record(Some(400), Some(50));
        assert_eq!(r.lag(), None, "behind every sample kept");
    }

    #[tokio::test]
    async fn heavy_reads_stay_on_the_primary_outside_safe_requests() {
        assert!(!lagging_ok(), "outside every request");
        lagging_reads(async {
            assert!(lagging_ok());
            note_write();
            assert!(!lagging_ok(), "a request that wrote");
        })
        .await;
    }
}
