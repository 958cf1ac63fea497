//! The dispatcher: claims due events under a lease, hands them to each
//! subscriber that accepts them and records the round's outcomes at once.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use diesel::sql_types::{Array, BigInt, Double, Int4, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::delivered::Claimed;
use super::{Delivered, Subscriber};
use crate::db::{Db, DbError};
use crate::prepared::Cached;

/// Claims due rows holding up to `$1` events (at least one row, however
/// large) and leases them for `$2` seconds, in one statement that commits
/// at once: other dispatchers skip them until the lease ends (a dispatcher
/// that died mid-delivery leaves them to others). The candidates are read
/// in the partial index's order (`event_outbox_pending`: due time, then
/// id), so a claim reads at most `$1` rows and stops: ordered by id alone it
/// had to collect and sort every due event first, 40 ms a round behind a
/// backlog of 50,000 (a bulk job's), which made draining it quadratic.
/// Batch rows weigh their events (`event_count`), which bounds a round's
/// memory; the candidates are locked only once chosen (`SKIP LOCKED`), so a
/// second dispatcher claims what the first left.
const CLAIM: &str = "UPDATE event_outbox SET next_attempt_at = now() + make_interval(secs => $2) \
     WHERE id = ANY(ARRAY(SELECT id FROM event_outbox \
         WHERE id = ANY(ARRAY(SELECT w.id FROM ( \
             SELECT c.id, sum(c.event_count) OVER (ORDER BY c.next_attempt_at, c.id) \
                 - c.event_count AS before \
             FROM (SELECT id, event_count, next_attempt_at FROM event_outbox \
                 WHERE status = 'pending' AND next_attempt_at <= now() \
                 ORDER BY next_attempt_at, id LIMIT $1) AS c) AS w \
             WHERE w.before < $1)) \
         AND status = 'pending' AND next_attempt_at <= now() \
         FOR UPDATE SKIP LOCKED)) \
     RETURNING id, event_id, name, payload, tenant_id, organization_id, actor_user_id, \
         actor_source, command_id, action_log_id, resource_kind, resource_id, origin, \
         created_at, attempts, batch";

const DELIVERY_STATES: &str = "SELECT outbox_id, subscriber, status, attempts FROM event_deliveries WHERE outbox_id = ANY($1)";

/// Every outcome of a round in one statement (one commit): the subscribers'
/// delivery rows, the events finished (`delivered` or `dead`) and the events
/// to retry, each as parallel arrays.
const RECORD_ROUND: &str = "WITH recorded AS ( \
       INSERT INTO event_deliveries (outbox_id, subscriber, status, attempts, last_error) \
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int4[], $5::text[]) \
       ON CONFLICT (outbox_id, subscriber) DO UPDATE SET status = EXCLUDED.status, \
         attempts = EXCLUDED.attempts, last_error = EXCLUDED.last_error, updated_at = now() \
       RETURNING 1), \
     finished AS ( \
       UPDATE event_outbox AS o SET status = f.status, attempts = f.attempts, \
         delivered_at = CASE WHEN f.status = 'delivered' THEN now() END, last_error = f.error \
       FROM unnest($6::bigint[], $7::text[], $8::int4[], $9::text[]) AS f(id, status, attempts, error) \
       WHERE o.id = f.id RETURNING 1), \
     retried AS ( \
       UPDATE event_outbox AS o SET attempts = r.attempts, last_error = r.error, \
         next_attempt_at = now() + make_interval(secs => r.delay) \
       FROM unnest($10::bigint[], $11::int4[], $12::text[], $13::float8[]) AS r(id, attempts, error, delay) \
       WHERE o.id = r.id RETURNING 1) \
     SELECT (SELECT count(*) FROM recorded) + (SELECT count(*) FROM finished) \
       + (SELECT count(*) FROM retried) AS n";

/// What a round did, written by [`RECORD_ROUND`].
#[derive(Default)]
struct Round {
    /// Delivery rows: event, subscriber, status, attempts, error.
    outbox_ids: Vec<i64>,
    subscribers: Vec<String>,
    statuses: Vec<String>,
    attempts: Vec<i32>,
    errors: Vec<Option<String>>,
    /// Finished events: id, `delivered`/`dead`, attempts, error.
    finished: Vec<i64>,
    finished_status: Vec<String>,
    finished_attempts: Vec<i32>,
    finished_errors: Vec<Option<String>>,
    /// Events to retry: id, attempts, error, delay in seconds.
    retried: Vec<i64>,
    retried_attempts: Vec<i32>,
    retried_errors: Vec<Option<String>>,
    retried_delays: Vec<f64>,
}

impl Round {
    fn finish(&mut self, id: i64, status: &str, attempts: i32, error: Option<String>) {
        self.finished.push(id);
        self.finished_status.push(status.to_string());
        self.finished_attempts.push(attempts);
        self.finished_errors.push(error);
    }

    async fn record(self, conn: &mut AsyncPgConnection) -> Result<(), DbError> {
        Cached(
            diesel::sql_query(RECORD_ROUND)
                .bind::<Array<BigInt>, _>(self.outbox_ids)
                .bind::<Array<Text>, _>(self.subscribers)
                .bind::<Array<Text>, _>(self.statuses)
                .bind::<Array<Int4>, _>(self.attempts)
                .bind::<Array<Nullable<Text>>, _>(self.errors)
                .bind::<Array<BigInt>, _>(self.finished)
                .bind::<Array<Text>, _>(self.finished_status)
                .bind::<Array<Int4>, _>(self.finished_attempts)
                .bind::<Array<Nullable<Text>>, _>(self.finished_errors)
                .bind::<Array<BigInt>, _>(self.retried)
                .bind::<Array<Int4>, _>(self.retried_attempts)
                .bind::<Array<Nullable<Text>>, _>(self.retried_errors)
                .bind::<Array<Double>, _>(self.retried_delays),
        )
        .execute(conn)
        .await?;
        Ok(())
    }
}

#[derive(diesel::QueryableByName)]
struct DeliveryState {
    #[diesel(sql_type = BigInt)]
    outbox_id: i64,
    #[diesel(sql_type = Text)]
    subscriber: String,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Int4)]
    attempts: i32,
}

/// Whether `subscriber` gets `event`: it wants the name and trusts the
/// origin. An event of a wanted name from an untrusted origin is dropped for
/// it, with a warning (a forged event: a rule emitting another module's
/// event name).
fn takes(subscriber: &dyn Subscriber, event: &Delivered) -> bool {
    if !subscriber.accepts(&event.name) {
        return false;
    }
    if subscriber.origins().allows(&event.origin) {
        return true;
    }
    tracing::warn!(
        event = %event.name,
        event.id = %event.event_id,
        origin = %event.origin,
        subscriber = subscriber.id(),
        "event refused: its origin is not one the subscriber trusts"
    );
    false
}

/// Delivers pending outbox events to subscribers.
pub struct Dispatcher {
    db: Db,
    subscribers: Vec<Arc<dyn Subscriber>>,
    /// Attempts per subscriber before its delivery is marked `dead` (default 8).
    pub max_attempts: i32,
    /// Events claimed per round (default 500; a batch row counts its
    /// events, and the first row is claimed whatever its size). A claim first walks the
    /// index entries that deliveries since the last vacuum left behind
    /// (about 3 ms after a burst of 100,000 events), so larger rounds spend
    /// that once per 500 events instead of per 100; a round's events are in
    /// memory together (about 3 MiB for 500 deal events), which bounds it.
    pub batch: i64,
    /// How long a claimed round is left to this dispatcher (default 5 minutes).
    pub lease: Duration,
}

impl Dispatcher {
    pub fn new(db: Db, subscribers: Vec<Arc<dyn Subscriber>>) -> Self {
        let mut seen = std::collections::HashSet::new();
        for subscriber in &subscribers {
            if !seen.insert(subscriber.id().to_string()) {
                tracing::error!(
                    subscriber = subscriber.id(),
                    "two subscribers share an id: they share one delivery state"
                );
            }
        }
        Self {
            db,
            subscribers,
            max_attempts: 8,
            batch: 500,
            lease: Duration::from_secs(300),
        }
    }

    /// Delay before attempt `n + 1`: 1 s, 2 s, 4 s, ... capped at 5 minutes.
    pub fn backoff(attempts: i32) -> Duration {
        Duration::from_secs(1u64 << attempts.clamp(0, 8)).min(Duration::from_secs(300))
    }

    /// Claims due events, delivers each to the subscribers that accept it
    /// and have not had it yet, and records each outcome. Returns how many
    /// events were handled. No transaction is held while subscribers run.
    /// Every statement stays prepared on its connection (all are
    /// [`Cached`]), so an idle poll every 250 ms costs Postgres one
    /// statement, no parsing or planning.
    pub async fn run_once(&self) -> Result<usize, DbError> {
        // Events of every tenant, delivered to subscribers that do the same.
        crate::rls::bypass("outbox dispatcher", self.deliver_due()).await
    }

    async fn deliver_due(&self) -> Result<usize, DbError> {
        let mut conn = self.db.conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        let mut claimed: Vec<Claimed> = Cached(
            diesel::sql_query(CLAIM)
                .bind::<BigInt, _>(self.batch)
                .bind::<Double, _>(self.lease.as_secs_f64()),
        )
        .load(conn)
        .await?;
        if claimed.is_empty() {
            return Ok(0);
        }
        claimed.sort_by_key(|c| c.event.id);
        // Delivery rows exist only for an event that was tried before (they
        // are written with its retry), so a round of first attempts (a bulk
        // job's burst) skips the look-up.
        let retried: Vec<i64> = claimed
            .iter()
            .filter(|c| c.event.attempts > 0)
            .map(|c| c.event.id)
            .collect();
        let states: Vec<DeliveryState> = if retried.is_empty() {
            Vec::new()
        } else {
            Cached(diesel::sql_query(DELIVERY_STATES).bind::<Array<BigInt>, _>(&retried))
                .load(conn)
                .await?
        };
        let states: HashMap<(i64, String), (String, i32)> = states
            .into_iter()
            .map(|s| ((s.outbox_id, s.subscriber), (s.status, s.attempts)))
            .collect();
        let mut round = Round::default();
        let mut handled = 0;
        for row in claimed {
            let (id, attempts) = (row.event.id, row.event.attempts);
            match row.events() {
                Ok(events) => {
                    handled += events.len();
                    self.deliver(id, attempts, &events, &states, &mut round)
                        .await;
                }
                Err(error) => {
                    // Written by this module only; kept for inspection.
                    tracing::error!(outbox.id = id, %error, "undeliverable outbox row");
                    handled += 1;
                    round.finish(id, "dead", attempts + 1, Some(error));
                }
            }
        }
        round.record(conn).await?;
        Ok(handled)
    }

    /// Offers the events of outbox row `id` (one, or a batch) to their
    /// subscribers, in order, and adds the outcomes to `round`. A
    /// subscriber that fails on one event of a batch stops there and gets
    /// the whole batch again at the retry.
    async fn deliver(
        &self,
        id: i64,
        tried: i32,
        events: &[Delivered],
        states: &HashMap<(i64, String), (String, i32)>,
        round: &mut Round,
    ) {
        let mut retry_error: Option<String> = None;
        let mut dead_error: Option<String> = None;
        // This attempt's outcomes, per subscriber: written only when they are
        // needed later (see below).
        let mut outcomes: Vec<(&str, &'static str, i32, Option<String>)> = Vec::new();
        let mut had_state = false;
        let subscribers = self
            .subscribers
            .iter()
            .filter(|s| events.iter().any(|e| s.accepts(&e.name)));
        for subscriber in subscribers {
            let name = subscriber.id();
            let known = states.get(&(id, name.to_string()));
            had_state |= known.is_some();
            let (status, attempts) = known.map(|(s, a)| (s.as_str(), *a)).unwrap_or(("new", 0));
            match status {
                "delivered" => continue,
                "dead" => {
                    dead_error.get_or_insert_with(|| format!("{name}: gave up"));
                    continue;
                }
                _ => {}
            }
            let attempts = attempts + 1;
            let mut failure = None;
            for event in events.iter().filter(|e| takes(subscriber.as_ref(), e)) {
                if let Err(err) = subscriber.handle(event).await {
                    tracing::warn!(
                        event = %event.name,
                        event.id = %event.event_id,
                        subscriber = name,
                        attempts,
                        error = %err,
                        "event delivery failed"
                    );
                    failure = Some(err);
                    break;
                }
            }
            let (status, error) = match failure {
                None => ("delivered", None),
                Some(err) => {
                    let error = format!("{name}: {err}");
                    if attempts >= self.max_attempts {
                        dead_error.get_or_insert(error.clone());
                        ("dead", Some(error))
                    } else {
                        retry_error.get_or_insert(error.clone());
                        ("failed", Some(error))
                    }
                }
            };
            outcomes.push((name, status, attempts, error));
        }
        // Delivery rows remember which subscribers already have an event that
        // is tried again. An event every subscriber took at its first attempt
        // (nearly all of them) needs none: its own row says `delivered`. This
        // halves what a round writes (a bulk job's 200,000 events would
        // otherwise add 400,000 delivery rows).
        let all_took_it = retry_error.is_none() && dead_error.is_none() && !had_state;
        if !all_took_it {
            for (name, status, attempts, error) in outcomes {
                round.outbox_ids.push(id);
                round.subscribers.push(name.to_string());
                round.statuses.push(status.to_string());
                round.attempts.push(attempts);
                round.errors.push(error);
            }
        }
        let attempts = tried + 1;
        match retry_error {
            Some(error) => {
                round.retried.push(id);
                round.retried_attempts.push(attempts);
                round.retried_errors.push(Some(error));
                round
                    .retried_delays
                    .push(Self::backoff(attempts).as_secs_f64());
            }
            None => {
                // Every subscriber had it, or gave up on it for good.
                let status = if dead_error.is_some() {
                    "dead"
                } else {
                    "delivered"
                };
                round.finish(id, status, attempts, dead_error);
            }
        }
    }

    /// Runs forever: a round every `interval`, immediately again while rounds
    /// find work.
    pub async fn run(self: Arc<Self>, interval: Duration) {
        loop {
            match self.run_once().await {
                Ok(n) if n > 0 => continue,
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "outbox dispatch failed"),
            }
            tokio::time::sleep(interval).await;
        }
    }
}
