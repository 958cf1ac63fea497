//! Access-log entries written behind the answer, in batches.
//!
//! A kept answer ([`crate::http::read_cache`]) is served after one read-only
//! statement; its access-log entry is queued here and written by a writer
//! task, many entries per statement. One write transaction per read was the
//! floor of a kept list's cost: Postgres commits a few times fewer one-row
//! inserts per second than it answers reads, so the log, not the list, set
//! the pace (docs/benchmarks.md, stop 21).
//!
//! **What is guaranteed.**
//! - An entry is queued only after the read was checked and before the answer
//!   is sent; it carries the time of the read, not of its write.
//! - Entries are written in the order they were queued, each exactly once: a
//!   row's id is chosen when its batch is cut, a batch once cut is retried as
//!   cut (it stays in the queue's `in_flight` until written), and a repeated
//!   write of a row (`ON CONFLICT (id, created_at) DO NOTHING`: the key of the
//!   partitioned table) changes nothing, so a
//!   writer cancelled after its insert but before it noted so loses and
//!   doubles nothing.
//! - Repeated reads of one kept answer share a row ([`Row`]): the first read
//!   as any read's row, each further one as its time and the base of its
//!   entry ids, at most [`REPEAT_SPAN`] after the first and [`MAX_REPEATS`]
//!   per row. The view `access_logs` shows each read's entries at the read's
//!   own time, as if each had its row. A repeated 50-record read was a 3 KB
//!   row; it is now 24 bytes of one, which took the kept user list from 39%
//!   to 76% of a profile read (docs/benchmarks.md, stop 22).
//! - [`settle`] returns once every entry queued before it was called is
//!   written. The access-log API settles before it reads, so a client sees its
//!   own reads; the server settles when it shuts down.
//! - Memory is bounded: at most [`MAX_PENDING`] entries wait. A read that finds
//!   the queue full writes its entry itself before it is answered.
//! - A failed write is retried (with a growing pause) until Postgres takes it;
//!   an entry Postgres rejects (not a connection failure) is dropped with an
//!   error in the server log, so it cannot hold back the ones behind it.
//!
//! **What is not.** A process that dies without shutting down (killed, out of
//! memory) loses the entries still queued, at most a few milliseconds' worth
//! under load. The reference writes every access-log entry fire-and-forget,
//! unbounded and unretried (`../shared/reference/audit-logs.md`, §8).

mod batch;
mod rows;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::AsyncPgConnection;
use tokio::sync::Notify;

use super::ReadLog;
use crate::db::{Db, DbError, uncounted};

use batch::{Batch, Pending, Row, cut};
use rows::insert;

/// Entries that may wait to be written; beyond it reads write their own.
pub const MAX_PENDING: usize = 4096;

/// Rows per statement: a power of two, and batches are cut to powers of
/// two, so a connection prepares at most five statement texts. 16, not 64:
/// a connection's write buffer keeps the size of its largest statement, and
/// 64-row batches (~180 KB) grew RSS by 8 MiB over the pool for no
/// measurable throughput (docs/benchmarks.md, stop 21).
const MAX_BATCH: usize = 16;

/// The longest time between the first and the last read of one row. The
/// view dates each read exactly; queries bound the row's time (`stored_at`)
/// with this slack to reach the indexes, and retention keeps a row this much
/// longer, so no read is deleted before its age. Short, because the slack is
/// what a page of the access log reads beyond its entries; the writer's
/// rows take a millisecond or two of reads anyway.
pub const REPEAT_SPAN: time::Duration = time::Duration::microseconds(REPEAT_SPAN_MICROS);
/// [`REPEAT_SPAN`] in microseconds, for SQL intervals.
pub const REPEAT_SPAN_MICROS: i64 = 10_000;

/// Further reads one row holds at most. Small on purpose: a page of the
/// access log expands every read of the rows it reaches, so a row of 64
/// reads of 50 records made the newest page sort 3,200 entries (180 ms with
/// 34 such rows in reach; 1.6 ms with rows of 8 and a 10 ms span). Eight
/// reads a row already make the writer's rows eight times fewer.
const MAX_REPEATS: usize = 7;

/// The pause after a failed write, doubled up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const MAX_PAUSE: Duration = Duration::from_secs(5);

/// The entries of one process waiting to be written (one per [`Db`]).
#[derive(Debug, Default)]
pub struct AccessQueue {
    state: Mutex<State>,
    /// Woken whenever entries are written or the writer stops.
    progress: Notify,
}

#[derive(Debug, Default)]
struct State {
    pending: VecDeque<Pending>,
    /// The batch being written, cut from the front of `pending`: a writer
    /// that fails or stops leaves it for the next to write as it is.
    in_flight: Option<Arc<Batch>>,
    /// A writer is running (a spawned task, or a [`settle`] writing inline).
    writing: bool,
    /// Entries ever queued, and ever taken off the queue (written or
    /// rejected): FIFO, so `done >= n` means the first `n` are handled.
    queued: u64,
    done: u64,
}

impl AccessQueue {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Entries waiting to be written.
    pub fn pending(&self) -> usize {
        self.lock().pending.len()
    }

    /// The next batch to write (copied: entries leave the queue only once
    /// written), or `None` after marking the writer stopped when none is left.
    fn next_batch(&self) -> Option<Arc<Batch>> {
        let mut state = self.lock();
        if state.pending.is_empty() {
            state.writing = false;
            drop(state);
            self.progress.notify_waiters();
            return None;
        }
        if state.in_flight.is_none() {
            state.in_flight = Some(Arc::new(cut(&state.pending)));
        }
        state.in_flight.clone()
    }

    /// Takes a written batch's reads off the queue.
    fn written(&self, batch: &Batch) {
        let mut state = self.lock();
        state.in_flight = None;
        let n = batch.taken.min(state.pending.len());
        state.pending.drain(..n);
        state.done += n as u64;
        drop(state);
        self.progress.notify_waiters();
    }

    /// Starts a writer for what is queued when none runs.
    fn wake(self: &Arc<Self>, db: &Db) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut state = self.lock();
        if state.writing || state.pending.is_empty() {
            return;
        }
        state.writing = true;
        drop(state);
        runtime.spawn(uncounted(write_queued(
            WriterMark::new(self),
            db.clone(),
            true,
        )));
    }
}

/// The largest power of two ≤ `pending`, at most [`MAX_BATCH`].
fn batch_len(pending: usize) -> usize {
    let n = pending.min(MAX_BATCH);
    if n == 0 { 0 } else { 1 << n.ilog2() }
}

/// Queues the entry of one more read of `log`'s records, to be written behind
/// the answer. `false` when it cannot be queued (the queue is full, or there
/// is no async runtime to write it): write it with [`log_now`] instead.
pub fn log_behind(db: &Db, log: &Arc<ReadLog>) -> bool {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return false;
    };
    // Stamped before taking the lock, which every kept read shares.
    let read = Pending::now(log);
    let queue = db.access_queue();
    let mut state = queue.lock();
    if state.pending.len() >= MAX_PENDING {
        return false;
    }
    state.pending.push_back(read);
    state.queued += 1;
    let start = !state.writing;
    state.writing = true;
    drop(state);
    if start {
        runtime.spawn(uncounted(write_queued(
            WriterMark::new(queue),
            // A read served by the replica writes its entries to the primary.
            db.primary(),
            true,
        )));
    }
    true
}

/// Writes the entry of one read of `log`'s records now, on `conn`: the row
/// [`log_behind`] would have written.
pub async fn log_now(conn: &mut AsyncPgConnection, log: &Arc<ReadLog>) -> Result<(), DieselError> {
    insert(conn, &[Row::new(&Pending::now(log))]).await
}

/// Returns once every entry queued before the call is written (writing them
/// on this task when no writer runs). Statements it sends are not counted as
/// the caller's ([`crate::db::thread_queries`]): they are earlier reads'.
pub async fn settle(db: &Db) -> Result<(), DbError> {
    let queue = db.access_queue().clone();
    let target = queue.lock().queued;
    loop {
        let progress = queue.progress.notified();
        tokio::pin!(progress);
        progress.as_mut().enable();
        // `Some(mark)`: no writer runs, this task becomes it.
        let mark = {
            let mut state = queue.lock();
            if state.done >= target {
                return Ok(());
            }
            (!state.writing).then(|| {
                state.writing = true;
                WriterMark::new(&queue)
            })
        };
        if let Some(mark) = mark {
            let written = uncounted(write_queued(mark, db.clone(), false)).await;
            if written.is_err() {
                // Keep trying behind, so entries do not wait for the next read.
                queue.wake(db);
            }
            return written;
        }
        progress.await;
    }
}

/// Held by the running writer: clears the queue's `writing` mark if the
/// writer stops early (an error, or its task dropped with its runtime, even
/// before it first ran), so the next read or [`settle`] starts another; what
/// was queued is still there.
struct WriterMark {
    queue: Arc<AccessQueue>,
    stopped: bool,
}

impl WriterMark {
    /// The mark of a writer the caller has just set `writing` for.
    fn new(queue: &Arc<AccessQueue>) -> Self {
        Self {
            queue: queue.clone(),
            stopped: false,
        }
    }
}

impl Drop for WriterMark {
    fn drop(&mut self) {
        if !self.stopped {
            self.queue.lock().writing = false;
            self.queue.progress.notify_waiters();
        }
    }
}

/// Writes queued entries until none is left. With `retry`, a failed write is
/// tried again after a pause; without, the first failure is returned.
async fn write_queued(mut mark: WriterMark, db: Db, retry: bool) -> Result<(), DbError> {
    let queue = mark.queue.clone();
    let mut pause = FIRST_PAUSE;
    loop {
        let Some(batch) = queue.next_batch() else {
            mark.stopped = true;
            return Ok(());
        };
        // One batch holds reads of several tenants.
        match crate::rls::bypass("access log writer", write_batch(&db, &batch.rows)).await {
            Ok(()) => {
                queue.written(&batch);
                pause = FIRST_PAUSE;
            }
            Err(err) if retry => {
                tracing::warn!(
                    error = %err,
                    pending = queue.pending(),
                    "access log: could not write queued entries; retrying"
                );
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_PAUSE);
            }
            Err(err) => return Err(err),
        }
    }
}

/// Writes `batch` in one statement. If Postgres rejects it (anything but a
/// lost connection), the rows are written one by one and the rejected ones
/// dropped, so one bad entry cannot block the queue.
async fn write_batch(db: &Db, batch: &[Row]) -> Result<(), DbError> {
    let mut conn = db.conn().await?;
    match insert(&mut conn, batch).await {
        Ok(()) => Ok(()),
        Err(err) if !rejected(&err) => Err(err.into()),
        Err(_) => {
            for one in batch {
                match insert(&mut conn, std::slice::from_ref(one)).await {
                    Ok(()) => {}
                    Err(err) if rejected(&err) => tracing::error!(
                        error = %err,
                        entry = %one.id,
                        reads = one.reads(),
                        actor = ?one.first.log.actor.user_id,
                        kind = one.first.log.resource_kind,
                        "access log: Postgres rejected an entry; dropped"
                    ),
                    Err(err) => return Err(err.into()),
                }
            }
            Ok(())
        }
    }
}

/// Whether Postgres refused the statement itself (a retry would fail again).
fn rejected(err: &DieselError) -> bool {
    matches!(err, DieselError::DatabaseError(kind, _) if !matches!(kind, DatabaseErrorKind::ClosedConnection))
}

#[cfg(test)]
mod tests;
