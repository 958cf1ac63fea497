//! Units of work and their durable outcomes.
//!
//! A handler splits a job into units ([`JobContext::unit`]); a unit carries one
//! or many items. Its effects, its `job_units` row (items, failed items) and
//! the progress counters commit in one transaction, so a retry skips exactly
//! the finished units and never applies one twice. Progress is counted in
//! items with running counters (`processed_count += items` on the progress
//! record, `items_failed += failed` on the queue row): a unit costs the same
//! whether it is the first or the hundred-thousandth. Items that fail for good
//! are stored with the unit and listed in the job's result
//! ([`failed_items`]).
//!
//! Slightly over 400 lines on purpose: the unit transaction, its report and
//! its errors are one topic.

use std::fmt;

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_core::AppError;
use stoa_core::command::Actor;
use stoa_core::db::{Db, DbError};
use uuid::Uuid;

use crate::enqueue::JobScope;
use crate::jobs::Job;
use crate::schema::{job_queue, job_units};
use crate::service;

/// How many failed items a job's result lists (`failedCount` has them all).
pub const FAILED_ITEMS_LISTED: usize = 100;

/// Why a job's run stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobError {
    /// A passing failure (database, network, a conflict): this attempt fails
    /// and the job is retried with back-off until `max_attempts`.
    Retry(String),
    /// Retrying cannot help (the creator lost the right, the input is invalid):
    /// the job is `dead` at once and its progress record `failed` with the message.
    Final(String),
}

impl JobError {
    pub fn retry(message: impl fmt::Display) -> Self {
        Self::Retry(message.to_string())
    }

    pub fn fatal(message: impl fmt::Display) -> Self {
        Self::Final(message.to_string())
    }

    pub fn message(&self) -> &str {
        match self {
            Self::Retry(m) | Self::Final(m) => m,
        }
    }

    pub fn is_final(&self) -> bool {
        matches!(self, Self::Final(_))
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for JobError {}

impl From<String> for JobError {
    fn from(message: String) -> Self {
        Self::Retry(message)
    }
}

/// Client errors (400, 401, 403, 404, 422, …) are final: the same input in the
/// same scope fails the same way. Conflicts, rate limits and server errors
/// are retried.
impl From<AppError> for JobError {
    fn from(err: AppError) -> Self {
        let status = err.status();
        let passing = status.is_server_error()
            || status == actix_web::http::StatusCode::CONFLICT
            || status == actix_web::http::StatusCode::TOO_MANY_REQUESTS;
        if passing {
            tracing::debug!(error = ?err, "job step failed");
            Self::Retry(err.message().to_string())
        } else {
            Self::Final(err.message().to_string())
        }
    }
}

impl From<diesel::result::Error> for JobError {
    fn from(err: diesel::result::Error) -> Self {
        Self::Retry(format!("database: {err}"))
    }
}

impl From<DbError> for JobError {
    fn from(err: DbError) -> Self {
        Self::Retry(err.to_string())
    }
}

/// An item that failed for good, as the job's result lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedItem {
    pub id: String,
    pub message: String,
}

/// What a unit did: by default every item succeeded; [`UnitReport::fail`]
/// records an item that failed for good while the others' effects commit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnitReport {
    failed: Vec<FailedItem>,
}

impl UnitReport {
    pub fn ok() -> Self {
        Self::default()
    }

    /// Records item `id` as failed with `message`.
    pub fn fail(&mut self, id: impl Into<String>, message: impl Into<String>) {
        self.failed.push(FailedItem {
            id: id.into(),
            message: message.into(),
        });
    }

    pub fn failed(&self) -> &[FailedItem] {
        &self.failed
    }
}

/// Why a unit did not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitError {
    /// The unit's items failed for good: its effects roll back, the unit is
    /// recorded as done with these items failed, and the job goes on.
    Items { items: Vec<String>, error: String },
    /// The job stops: retried, or dead at once ([`JobError`]).
    Job(JobError),
}

impl UnitError {
    /// Every item in `items` failed with `error`.
    pub fn items(
        items: impl IntoIterator<Item = impl Into<String>>,
        error: impl fmt::Display,
    ) -> Self {
        Self::Items {
            items: items.into_iter().map(Into::into).collect(),
            error: error.to_string(),
        }
    }
}

impl From<JobError> for UnitError {
    fn from(err: JobError) -> Self {
        Self::Job(err)
    }
}

impl From<AppError> for UnitError {
    fn from(err: AppError) -> Self {
        Self::Job(err.into())
    }
}

impl From<diesel::result::Error> for UnitError {
    fn from(err: diesel::result::Error) -> Self {
        Self::Job(err.into())
    }
}

/// How [`JobContext::unit`] went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitRun {
    /// Whether the unit ran now (`false`: an earlier attempt finished it).
    pub ran: bool,
    /// Items of the unit that failed for good in this run.
    pub failed: usize,
}

/// A unit's work: runs on the unit's transaction.
pub type UnitFn<'c> = Box<
    dyn for<'r> FnOnce(&'r mut AsyncPgConnection) -> BoxFuture<'r, Result<UnitReport, UnitError>>
        + Send
        + 'c,
>;

/// What a handler gets: the job, its scope and helpers for units, progress and
/// cancellation.
pub struct JobContext {
    pub db: Db,
    pub job: Job,
}

/// The transaction's error: the unit's own (rolled back), or the database's.
enum TxError {
    Unit(UnitError),
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for TxError {
    fn from(err: diesel::result::Error) -> Self {
        Self::Db(err)
    }
}

impl JobContext {
    pub fn payload(&self) -> &Value {
        &self.job.payload
    }

    /// The tenant, organization and creator the job runs for; `None` for
    /// system jobs (recurring sweeps, jobs enqueued without a scope).
    pub fn scope(&self) -> Option<JobScope> {
        self.job.scope()
    }

    /// A command-bus actor for the job's scope (source `system`, no
    /// principal): handlers that re-authorize the creator attach one.
    pub fn actor(&self) -> Actor {
        let scope = self.scope();
        Actor {
            user_id: scope.and_then(|s| s.user_id),
            tenant_id: scope.map(|s| s.tenant_id),
            organization_id: scope.and_then(|s| s.organization_id),
            source: "system",
            principal: None,
            // Handlers attach the registry's write guards
            // (`Actor::with_guards`) when their writes should pass them.
            guards: Default::default(),
        }
    }

    /// Runs unit `key` carrying `items` items unless an earlier attempt
    /// finished it. Its effects, its `job_units` row and the progress count
    /// (`processed += items`) commit together. A report with failed items
    /// stores them with the unit; [`UnitError::Items`] rolls the unit's
    /// effects back and stores every listed item as failed; [`UnitError::Job`]
    /// rolls back and stops the job.
    pub async fn unit<'c>(
        &self,
        key: &str,
        items: usize,
        f: UnitFn<'c>,
    ) -> Result<UnitRun, JobError> {
        let items =
            i32::try_from(items).map_err(|_| JobError::fatal("too many items in one unit"))?;
        let job = self.job.id;
        let progress = self.job.progress_job_id;
        let key = key.to_string();
        let mut conn = self.db.conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        let unit_key = key.clone();
        let ran = conn
            .transaction::<_, TxError, _>(async move |conn| {
                if !claim_unit(conn, job, &unit_key, items).await? {
                    return Ok(None);
                }
                let report = f(conn).await.map_err(TxError::Unit)?;
                let failed = report.failed.len();
                record(conn, job, progress, &unit_key, items, report.failed).await?;
                Ok(Some(failed))
            })
            .await;
        let failed = match ran {
            Ok(None) => {
                return Ok(UnitRun {
                    ran: false,
                    failed: 0,
                });
            }
            Ok(Some(failed)) => return Ok(UnitRun { ran: true, failed }),
            Err(TxError::Db(err)) => return Err(err.into()),
            Err(TxError::Unit(UnitError::Job(err))) => return Err(err),
            Err(TxError::Unit(UnitError::Items { items: ids, error })) => ids
                .into_iter()
                .map(|id| FailedItem {
                    id,
                    message: error.clone(),
                })
                .collect::<Vec<_>>(),
        };
        // The unit's effects are rolled back; its failure is recorded on its own.
        let count = failed.len();
        let recorded = conn
            .transaction::<_, diesel::result::Error, _>(async move |conn| {
                if !claim_unit(conn, job, &key, items).await? {
                    return Ok(false);
                }
                record(conn, job, progress, &key, items, failed).await?;
                Ok(true)
            })
            .await?;
        Ok(UnitRun {
            ran: recorded,
            failed: if recorded { count } else { 0 },
        })
    }

    /// Whether someone asked to cancel the job's progress record.
    pub async fn cancel_requested(&self) -> bool {
        let Some(progress) = self.job.progress_job_id else {
            return false;
        };
        match self.db.conn().await {
            Ok(mut conn) => service::cancel_requested(&mut conn, progress)
                .await
                .unwrap_or(false),
            Err(_) => false,
        }
    }
}

/// Inserts the unit's row; `false` when it exists (finished earlier).
async fn claim_unit(
    conn: &mut AsyncPgConnection,
    job: Uuid,
    key: &str,
    items: i32,
) -> QueryResult<bool> {
    let fresh = diesel::insert_into(job_units::table)
        .values((
            job_units::job_id.eq(job),
            job_units::unit.eq(key),
            job_units::items.eq(items),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(fresh > 0)
}

/// Stores the unit's failed items and moves the counters on, in O(1).
async fn record(
    conn: &mut AsyncPgConnection,
    job: Uuid,
    progress: Option<Uuid>,
    key: &str,
    items: i32,
    failed: Vec<FailedItem>,
) -> QueryResult<()> {
    if !failed.is_empty() {
        let count = i32::try_from(failed.len()).unwrap_or(i32::MAX);
        let json = serde_json::to_value(&failed).unwrap_or(Value::Null);
        diesel::update(
            job_units::table
                .filter(job_units::job_id.eq(job))
                .filter(job_units::unit.eq(key)),
        )
        .set(job_units::failed_items.eq(json))
        .execute(conn)
        .await?;
        diesel::update(job_queue::table.filter(job_queue::id.eq(job)))
            .set(job_queue::items_failed.eq(job_queue::items_failed + count))
            .execute(conn)
            .await?;
    }
    if let Some(progress) = progress {
        service::add_processed(conn, progress, items).await?;
    }
    Ok(())
}

/// The failed items of a job: the first [`FAILED_ITEMS_LISTED`] (in the order
/// their units finished) and how many failed in all.
pub async fn failed_items(
    conn: &mut AsyncPgConnection,
    job: Uuid,
) -> QueryResult<(Vec<FailedItem>, i64)> {
    let total: i32 = job_queue::table
        .filter(job_queue::id.eq(job))
        .select(job_queue::items_failed)
        .first(conn)
        .await
        .optional()?
        .unwrap_or(0);
    if total == 0 {
        return Ok((Vec::new(), 0));
    }
    let units: Vec<Option<Value>> = job_units::table
        .filter(job_units::job_id.eq(job))
        .filter(job_units::failed_items.is_not_null())
        .order((job_units::done_at.asc(), job_units::unit.asc()))
        .select(job_units::failed_items)
        .limit(i64::try_from(FAILED_ITEMS_LISTED).unwrap_or(100))
        .load(conn)
        .await?;
    let listed = units
        .into_iter()
        .flatten()
        .flat_map(|v| serde_json::from_value::<Vec<FailedItem>>(v).unwrap_or_default())
        .take(FAILED_ITEMS_LISTED)
        .collect();
    Ok((listed, i64::from(total)))
}

/// `summary` with `failedCount` and `failedItems` added (a handler's own
/// values win); a non-object summary is kept as it is.
pub fn with_failures(summary: Option<Value>, failed: &[FailedItem], count: i64) -> Option<Value> {
    let mut object = match summary {
        None => serde_json::Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => return Some(other),
    };
    object
        .entry("failedCount")
        .or_insert_with(|| Value::from(count));
    object
        .entry("failedItems")
        .or_insert_with(|| serde_json::to_value(failed).unwrap_or(Value::Null));
    Some(Value::Object(object))
}
