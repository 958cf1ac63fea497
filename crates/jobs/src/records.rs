//! The record a client polls for a job, seen from the queue.
//!
//! A job enqueued with a record (`progress_job_id` on the queue row) has its
//! record kept up to date by the engine: started when claimed, counted in the
//! unit's own transaction, heartbeated beside the handler, finished, failed or
//! cancelled at the end, and asked whether someone wants it cancelled. The
//! records themselves belong to whoever implements [`JobRecords`] (stoa's are
//! stoa-progress's `progress_jobs`, `stoa_progress::records()`); the queue only
//! calls this interface, so it depends on no module and a program that
//! embeds it without progress records runs its jobs with [`NoRecords`].

use diesel::QueryResult;
use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::Value;
use uuid::Uuid;

/// A record to create for a job about to be enqueued ([`crate::enqueue_with_record`]).
#[derive(Clone, Debug)]
pub struct NewRecord {
    /// The job's kind (the record's `jobType`).
    pub kind: String,
    pub name: String,
    pub description: Option<String>,
    /// Items the job will process, when known.
    pub total_count: Option<i32>,
    pub cancellable: bool,
    pub meta: Option<Value>,
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub started_by_user_id: Option<Uuid>,
}

/// The record lifecycle the engine drives. Every call runs on the caller's
/// connection (`add_processed` and `create` inside the caller's transaction).
pub trait JobRecords: Send + Sync {
    /// Creates a pending record; returns its id.
    fn create<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        record: NewRecord,
    ) -> BoxFuture<'a, QueryResult<Uuid>>;
    /// A worker claimed the job: the record is running.
    fn start<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>>;
    /// The worker is alive.
    fn heartbeat<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>>;
    /// A unit of `items` finished (in the unit's transaction).
    fn add_processed<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
        items: i32,
    ) -> BoxFuture<'a, QueryResult<()>>;
    /// The handler completed; `summary` carries the failed items, if any.
    fn complete<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
        summary: Option<Value>,
    ) -> BoxFuture<'a, QueryResult<()>>;
    /// The job is dead: `message` and the failed items so far.
    fn fail<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
        message: &'a str,
        summary: Option<Value>,
    ) -> BoxFuture<'a, QueryResult<()>>;
    /// The handler stopped because cancellation was requested.
    fn cancelled<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>>;
    /// Whether someone asked to cancel the job.
    fn cancel_requested<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, QueryResult<bool>>;
}

/// No records: jobs run, nothing is polled. [`JobRecords::create`] refuses,
/// so a job that asks for a record cannot be queued where none are kept.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoRecords;

impl JobRecords for NoRecords {
    fn create<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: NewRecord,
    ) -> BoxFuture<'a, QueryResult<Uuid>> {
        Box::pin(async {
            Err(diesel::result::Error::QueryBuilderError(
                "no job records are kept in this program (stoa_jobs::NoRecords)".into(),
            ))
        })
    }
    fn start<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async { Ok(()) })
    }
    fn heartbeat<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async { Ok(()) })
    }
    fn add_processed<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
        _: i32,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async { Ok(()) })
    }
    fn complete<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
        _: Option<Value>,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async { Ok(()) })
    }
    fn fail<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
        _: &'a str,
        _: Option<Value>,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async { Ok(()) })
    }
    fn cancelled<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async { Ok(()) })
    }
    fn cancel_requested<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: Uuid,
    ) -> BoxFuture<'a, QueryResult<bool>> {
        Box::pin(async { Ok(false) })
    }
}
