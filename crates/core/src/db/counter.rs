//! Counting the statements sent to Postgres (for `/metrics` and the tests'
//! round-trip counts), leaving background writers out of the count.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use diesel::connection::{Instrumentation, InstrumentationEvent};

/// Queries sent by this process (all threads), for `/metrics`.
static QUERIES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Queries sent from this thread: lets a test count the round trips of one
    /// request (actix test services run on the test's thread).
    static THREAD_QUERIES: Cell<u64> = const { Cell::new(0) };
    /// Set while a background writer ([`uncounted`]) is being polled.
    static UNCOUNTED: Cell<bool> = const { Cell::new(false) };
}

/// Counts every statement sent to Postgres (one event per round trip), and
/// turns transactions and statements into spans when traces are exported.
#[derive(Default)]
struct CountQueries {
    spans: crate::traces::statements::StatementSpans,
}

impl Instrumentation for CountQueries {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        self.spans.on_event(&event);
        if let InstrumentationEvent::StartQuery { .. } = event {
            QUERIES.fetch_add(1, Ordering::Relaxed);
            if !UNCOUNTED.with(Cell::get) {
                THREAD_QUERIES.with(|c| c.set(c.get() + 1));
            }
        }
    }
}

pub(super) fn install_query_counter() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if let Err(err) = diesel::connection::set_default_instrumentation(|| {
            Some(Box::new(CountQueries::default()))
        }) {
            tracing::warn!(error = %err, "query counting unavailable");
        }
    });
}

/// Statements this process has sent to Postgres.
pub fn queries_total() -> u64 {
    AtomicU64::load(&QUERIES, Ordering::Relaxed)
}

/// Statements sent from the current thread, except those of background
/// writers ([`uncounted`]): a request's own round trips.
pub fn thread_queries() -> u64 {
    THREAD_QUERIES.with(Cell::get)
}

/// `f`, whose statements count for the process ([`queries_total`]) but not
/// for the thread that happens to poll it ([`thread_queries`]): work written
/// behind earlier requests, such as queued access-log entries, is not the
/// round trips of the request running beside it.
pub(crate) fn uncounted<F: Future>(f: F) -> Uncounted<F> {
    Uncounted(Box::pin(f))
}

/// See [`uncounted`].
pub(crate) struct Uncounted<F>(Pin<Box<F>>);

impl<F: Future> Future for Uncounted<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let outer = UNCOUNTED.with(|c| c.replace(true));
        let polled = self.0.as_mut().poll(cx);
        UNCOUNTED.with(|c| c.set(outer));
        polled
    }
}
