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

mod errors;
mod store;

use diesel_async::{AsyncConnection, AsyncPgConnection};
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::sync::Arc;
use stoa_acl::AuthContext;
use stoa_acl::accounts::{Creator, CreatorResolver};
use stoa_core::command::{Actor, WriteGuards};
use stoa_core::db::Db;

use crate::enqueue::JobScope;
use crate::queue::Job;
use crate::records::{JobRecords, NoRecords};
use store::{claim_unit, record};

pub use errors::{FailedItem, JobError, UnitError, UnitReport};
pub use store::{failed_items, with_failures};

/// How many failed items a job's result lists (`failedCount` has them all).
pub const FAILED_ITEMS_LISTED: usize = 100;

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

/// A unit's work acting as the job's creator ([`JobContext::unit_as`]);
/// it owns what it uses (move the unit's ids in).
pub type UnitAsFn = Box<
    dyn for<'r> FnOnce(
            &'r mut AsyncPgConnection,
            AuthContext,
        ) -> BoxFuture<'r, Result<UnitReport, UnitError>>
        + Send
        + 'static,
>;

/// Resolves `creator`; a database failure is retried.
async fn creator_of(
    creators: &dyn CreatorResolver,
    conn: &mut AsyncPgConnection,
    creator: Creator,
) -> Result<Result<AuthContext, stoa_acl::CreatorGone>, JobError> {
    creators
        .resolve_creator(conn, creator)
        .await
        .map_err(JobError::from)
}

/// What a handler gets: the job, its scope and helpers for units, progress and
/// cancellation.
pub struct JobContext {
    pub db: Db,
    pub job: Job,
    /// Resolves the creator again ([`JobContext::creator`]); the workers get
    /// it from the module context (`Workers::with_services`).
    pub(crate) creators: Option<Arc<dyn CreatorResolver>>,
    /// The registry's write guards, attached to the creator's context.
    pub(crate) guards: WriteGuards,
    /// Where the job's record is counted (`Workers::with_records`).
    pub(crate) records: Arc<dyn JobRecords>,
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
    /// A context for `job` that cannot act as its creator (tests driving
    /// units by hand); the workers build theirs with the module context.
    pub fn new(db: Db, job: Job) -> Self {
        Self {
            db,
            job,
            creators: None,
            guards: WriteGuards::default(),
            records: Arc::new(NoRecords),
        }
    }

    /// The same context counting units on `records`' record of the job.
    pub fn with_records(mut self, records: Arc<dyn JobRecords>) -> Self {
        self.records = records;
        self
    }

    pub fn payload(&self) -> &Value {
        &self.job.payload
    }

    /// The tenant, organization and creator the job runs for; `None` for
    /// system jobs (recurring sweeps, jobs enqueued without a scope).
    pub fn scope(&self) -> Option<JobScope> {
        self.job.scope()
    }

    /// The creator's [`AuthContext`] as it stands now — user or API key,
    /// current grants, the job's tenant and organization selected, the
    /// registry's write guards attached — resolved on `conn`. Call it inside
    /// the transaction that writes (a unit's, see [`JobContext::unit_as`]):
    /// the resolution locks what it read, so a demotion or deletion made
    /// meanwhile waits for the write to commit, and the next resolution sees
    /// it. Its [`AuthContext::actor`] records the creator on every entry
    /// and passes the guards. A creator that can no longer act (deleted,
    /// deactivated, key revoked) is a final error naming why; a creator
    /// that still acts but lost a feature is the handler's check
    /// (`creator.require(..)`, per item or for the job).
    pub async fn creator(&self, conn: &mut AsyncPgConnection) -> Result<AuthContext, JobError> {
        let Some(scope) = self.scope() else {
            return Err(JobError::fatal("a system job has no creator to act as"));
        };
        let Some(creators) = &self.creators else {
            return Err(JobError::fatal(
                "the workers have no creator resolver (Workers::with_services)",
            ));
        };
        let creator = Creator {
            tenant_id: scope.tenant_id,
            organization_id: scope.organization_id,
            user_id: scope.user_id,
            api_key_id: scope.api_key_id,
        };
        match creator_of(creators.as_ref(), conn, creator).await? {
            Ok(mut ctx) => {
                ctx.guards = self.guards.clone();
                Ok(ctx)
            }
            Err(gone) => Err(JobError::fatal(format!(
                "The job's creator can no longer act: {gone}"
            ))),
        }
    }

    /// [`JobContext::unit`] acting as the creator: the creator is resolved
    /// inside the unit's transaction ([`JobContext::creator`]) and handed to
    /// `f`, so the unit's writes rest on the grants held at that moment. A
    /// creator gone since the last unit ends the job; finished units stay.
    pub async fn unit_as(&self, key: &str, items: usize, f: UnitAsFn) -> Result<UnitRun, JobError> {
        // The unit's closure may not borrow the context: it gets a copy,
        // without the payload (the creator is resolved from the job's scope;
        // a bulk job's payload holds its 10,000 ids, which each unit cloned).
        let job = &self.job;
        let this = JobContext {
            db: self.db.clone(),
            job: Job {
                id: job.id,
                kind: job.kind.clone(),
                payload: Value::Null,
                progress_job_id: job.progress_job_id,
                attempts: job.attempts,
                max_attempts: job.max_attempts,
                tenant_id: job.tenant_id,
                organization_id: job.organization_id,
                created_by_user_id: job.created_by_user_id,
                created_by_api_key_id: job.created_by_api_key_id,
                trace_parent: job.trace_parent.clone(),
            },
            creators: self.creators.clone(),
            guards: self.guards.clone(),
            records: self.records.clone(),
        };
        self.unit(
            key,
            items,
            Box::new(move |conn| {
                Box::pin(async move {
                    let creator = this.creator(conn).await.map_err(UnitError::Job)?;
                    f(conn, creator).await
                })
            }),
        )
        .await
    }

    /// A command-bus actor for system work (source `system`, no principal,
    /// no guards): recurring sweeps and jobs without a creator. A job acting
    /// for its creator writes with `ctx.creator(conn).await?.actor()`.
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
        let records = self.records.clone();
        let ran = conn
            .transaction::<_, TxError, _>(async move |conn| {
                if !claim_unit(conn, job, &unit_key, items).await? {
                    return Ok(None);
                }
                let report = f(conn).await.map_err(TxError::Unit)?;
                let failed = report.failed.len();
                let progress = progress.map(|p| (records.as_ref(), p));
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
        let records = self.records.clone();
        let recorded = conn
            .transaction::<_, diesel::result::Error, _>(async move |conn| {
                if !claim_unit(conn, job, &key, items).await? {
                    return Ok(false);
                }
                let progress = progress.map(|p| (records.as_ref(), p));
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
            Ok(mut conn) => self
                .records
                .cancel_requested(&mut conn, progress)
                .await
                .unwrap_or(false),
            Err(_) => false,
        }
    }
}
