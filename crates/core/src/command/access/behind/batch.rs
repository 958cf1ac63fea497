//! How queued reads become rows: repeated reads of one kept answer share
//! a row, and a batch is cut from the front of the queue.

use std::collections::VecDeque;
use std::sync::Arc;

use time::OffsetDateTime;
use uuid::Uuid;

use super::super::ReadLog;

use super::{MAX_BATCH, MAX_REPEATS, REPEAT_SPAN, batch_len};

/// One read waiting to be logged.
#[derive(Clone, Debug)]
pub(super) struct Pending {
    /// When the read was answered.
    pub(super) at: OffsetDateTime,
    /// The base of the entry ids ([`entry_ids_from`]).
    pub(super) base: Uuid,
    pub(super) log: Arc<ReadLog>,
}

impl Pending {
    pub(super) fn now(log: &Arc<ReadLog>) -> Self {
        Self {
            at: OffsetDateTime::now_utc(),
            base: Uuid::new_v4(),
            log: log.clone(),
        }
    }
}

/// One `access_reads` row: a read, and the repeated reads of the same kept
/// answer written with it.
#[derive(Clone, Debug)]
pub(super) struct Row {
    /// The `access_reads` row id, chosen when the batch is cut: a batch is
    /// retried as cut, so a repeated write of the row changes nothing.
    pub(super) id: Uuid,
    pub(super) first: Pending,
    /// Each further read's entry-id base and time, in queue order.
    pub(super) repeat_bases: Vec<Uuid>,
    pub(super) repeat_ats: Vec<OffsetDateTime>,
}

impl Row {
    pub(super) fn new(first: &Pending) -> Self {
        Self {
            id: Uuid::new_v4(),
            first: first.clone(),
            repeat_bases: Vec::new(),
            repeat_ats: Vec::new(),
        }
    }

    /// Whether `read` may be written as a repeat of this row: a use of the
    /// same kept answer, not earlier than the first (a clock set back starts
    /// a row) and within [`REPEAT_SPAN`] of it, while the row has room.
    /// Reads of more records than entry ids can be derived for stand alone.
    fn takes(&self, read: &Pending) -> bool {
        Arc::ptr_eq(&self.first.log, &read.log)
            && self.repeat_bases.len() < MAX_REPEATS
            && self.first.log.ids.len() <= DERIVABLE_IDS
            && read.at >= self.first.at
            && read.at - self.first.at <= REPEAT_SPAN
    }

    fn repeat(&mut self, read: &Pending) {
        self.repeat_bases.push(read.base);
        self.repeat_ats.push(read.at);
    }

    /// The reads this row holds.
    pub(super) fn reads(&self) -> usize {
        1 + self.repeat_bases.len()
    }
}

/// The records a read may name for its entry ids to derive from one base
/// ([`entry_ids_from`]; the view derives repeats' ids the same way).
pub(super) const DERIVABLE_IDS: usize = u16::MAX as usize + 1;

/// The rows written by one statement, and how many queued reads they hold
/// (the queue's first `taken`).
#[derive(Clone, Debug, Default)]
pub(super) struct Batch {
    pub(super) rows: Vec<Row>,
    pub(super) taken: usize,
}

/// Cuts the next batch from the front of the queue: up to [`MAX_BATCH`] rows,
/// a power of two of them (so a connection prepares at most five statement
/// texts), each read joining the newest row of its answer when that
/// [`Row::takes`] it.
pub(super) fn cut(pending: &VecDeque<Pending>) -> Batch {
    let batch = group(pending, MAX_BATCH);
    let whole = batch_len(batch.rows.len());
    if whole == batch.rows.len() {
        batch
    } else {
        // The same walk, stopped before the row past the power of two: the
        // reads it takes are a prefix of the queue, as `written` needs.
        group(pending, whole)
    }
}

/// Groups the queue's front into at most `max_rows` rows, stopping at the
/// first read that would need one more.
pub(super) fn group(pending: &VecDeque<Pending>, max_rows: usize) -> Batch {
    let mut batch = Batch::default();
    for read in pending {
        let open = batch
            .rows
            .iter()
            .rposition(|row| Arc::ptr_eq(&row.first.log, &read.log))
            .filter(|&i| batch.rows[i].takes(read));
        match open {
            Some(i) => batch.rows[i].repeat(read),
            None if batch.rows.len() >= max_rows => break,
            None => batch.rows.push(Row::new(read)),
        }
        batch.taken += 1;
    }
    batch
}
