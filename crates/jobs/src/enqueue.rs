//! Putting work on the queue, inside the caller's transaction.
//!
//! A module's route that authorized a bulk request enqueues on the route's
//! connection, so the job exists only if the change that asked for it
//! commits. [`enqueue_recorded`] also creates the record clients poll
//! (through [`JobRecords`]; stoa's routes call `stoa_progress::enqueue_job`,
//! which passes progress's records). The job keeps the caller's scope
//! ([`JobScope`]: tenant, organization, user or API key); the worker runs it
//! in that scope and the handler can re-authorize the creator
//! ([`crate::JobContext::scope`]). [`enqueue`] is the low-level form without
//! a scope or a record (system work, tests).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use uuid::Uuid;

use crate::error::JobsError;
use crate::records::{JobRecords, NewRecord};
use crate::schema::job_queue;

/// Attempts a job gets unless its spec says otherwise.
pub const DEFAULT_MAX_ATTEMPTS: i32 = 5;

/// Adds a job without a scope to the queue on `conn` (the caller's transaction).
pub async fn enqueue(
    conn: &mut AsyncPgConnection,
    kind: &str,
    payload: &Value,
    progress_job: Option<Uuid>,
    max_attempts: i32,
) -> QueryResult<Uuid> {
    diesel::insert_into(job_queue::table)
        .values((
            job_queue::kind.eq(kind),
            job_queue::payload.eq(payload),
            job_queue::progress_job_id.eq(progress_job),
            job_queue::max_attempts.eq(max_attempts.max(1)),
            // The request's trace context, so the job's spans join its trace
            // (`None`, stored as NULL, while traces are off).
            job_queue::trace_parent.eq(stoa_core::traces::current_traceparent()),
        ))
        .returning(job_queue::id)
        .get_result(conn)
        .await
}

/// The scope a job was created in and runs in: kept on the queue row (and the
/// tenant, organization and user on the progress record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobScope {
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    /// The user who asked for the job (`None` for an API key acting on its own).
    pub user_id: Option<Uuid>,
    /// The API key the request came with, if any.
    pub api_key_id: Option<Uuid>,
}

impl JobScope {
    /// The caller's tenant (403 without one) and the organization its writes
    /// go to: the selected one; under `__all__` (no selection) a restricted
    /// caller's job belongs to its home organization when that is inside
    /// its organizations, as `POST /progress/jobs` does, never to the
    /// tenant level by accident of the selection (issue 49: a bulk deal job
    /// started under `__all__` by an admin of one branch was a tenant-wide
    /// record, hidden from its own creator).
    pub fn of(ctx: &AuthContext) -> Result<Self, AppError> {
        let organization = ctx.organization_id().or_else(|| {
            let allowed = ctx.organization_restriction()?;
            ctx.home_organization_id.filter(|h| allowed.contains(h))
        });
        Ok(Self {
            tenant_id: ctx.tenant()?,
            organization_id: organization,
            user_id: ctx.user_id,
            api_key_id: ctx.api_key_id,
        })
    }
}

/// What [`enqueue_recorded`] creates: a record and a queue row.
#[derive(Clone, Debug)]
pub struct JobSpec {
    /// The handler's kind, also the progress record's `jobType`
    /// (`<module>.<resource>.<op>`).
    pub kind: String,
    /// The handler's input (ids, options). The scope is not part of it.
    pub payload: Value,
    /// Items the job will process: the progress record's `totalCount`.
    pub items_total: usize,
    /// Shown to the user; the kind when `None`.
    pub name: Option<String>,
    pub description: Option<String>,
    pub meta: Option<Value>,
    pub cancellable: bool,
    pub max_attempts: i32,
}

impl JobSpec {
    pub fn new(kind: impl Into<String>, payload: Value, items_total: usize) -> Self {
        Self {
            kind: kind.into(),
            payload,
            items_total,
            name: None,
            description: None,
            meta: None,
            cancellable: false,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
        }
    }

    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    pub fn meta(mut self, meta: Value) -> Self {
        self.meta = Some(meta);
        self
    }

    pub fn cancellable(mut self, cancellable: bool) -> Self {
        self.cancellable = cancellable;
        self
    }

    pub fn max_attempts(mut self, max_attempts: i32) -> Self {
        self.max_attempts = max_attempts;
        self
    }
}

/// The rows [`enqueue_recorded`] created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// What clients poll (`GET /progress/jobs/{id}`): answer it as `progressJobId`.
    pub progress_job_id: Uuid,
    /// The queue row.
    pub job_id: Uuid,
}

/// Creates the job's record (`pending`, `totalCount = items_total`) through
/// `records` and enqueues job `spec.kind` for it in `scope`, on `conn` — the
/// transaction of the route that authorized the request.
pub async fn enqueue_recorded(
    conn: &mut AsyncPgConnection,
    records: &dyn JobRecords,
    scope: &JobScope,
    spec: JobSpec,
) -> Result<Queued, AppError> {
    let total = i32::try_from(spec.items_total).map_err(|_| JobsError::TooManyItems)?;
    let progress_job_id = records
        .create(
            conn,
            NewRecord {
                kind: spec.kind.clone(),
                name: spec.name.unwrap_or_else(|| spec.kind.clone()),
                description: spec.description,
                total_count: (total > 0).then_some(total),
                cancellable: spec.cancellable,
                meta: spec.meta,
                tenant_id: scope.tenant_id,
                organization_id: scope.organization_id,
                started_by_user_id: scope.user_id,
            },
        )
        .await?;
    let job_id = insert_scoped(
        conn,
        scope,
        &spec.kind,
        &spec.payload,
        spec.max_attempts,
        Some(progress_job_id),
    )
    .await?;
    Ok(Queued {
        progress_job_id,
        job_id,
    })
}

/// What [`enqueue_job`] created: the queue row, and the record where the
/// program keeps records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enqueued {
    pub job_id: Uuid,
    /// What clients poll (`progressJobId`); `None` where no records are kept.
    pub progress_job_id: Option<Uuid>,
}

/// Enqueues `spec` in the caller's scope ([`JobScope::of`], 403 without a
/// tenant) on `conn`, with a record through `records` when the program keeps
/// them, else the queue row alone. A module's route calls it with the
/// `web::Data<dyn JobRecords>` it finds as app data: stoa's server has
/// stoa-progress's (`stoa_progress::configure` registers them), a program
/// that embeds the module without stoa-progress has none and its clients
/// get no record to poll.
pub async fn enqueue_job(
    conn: &mut AsyncPgConnection,
    records: Option<&dyn JobRecords>,
    ctx: &AuthContext,
    spec: JobSpec,
) -> Result<Enqueued, AppError> {
    let scope = JobScope::of(ctx)?;
    match records {
        Some(records) => {
            let queued = enqueue_recorded(conn, records, &scope, spec).await?;
            Ok(Enqueued {
                job_id: queued.job_id,
                progress_job_id: Some(queued.progress_job_id),
            })
        }
        None => {
            i32::try_from(spec.items_total).map_err(|_| JobsError::TooManyItems)?;
            let job_id = insert_scoped(
                conn,
                &scope,
                &spec.kind,
                &spec.payload,
                spec.max_attempts,
                None,
            )
            .await?;
            Ok(Enqueued {
                job_id,
                progress_job_id: None,
            })
        }
    }
}

/// The queue row of a job in `scope` (and its record, if any).
async fn insert_scoped(
    conn: &mut AsyncPgConnection,
    scope: &JobScope,
    kind: &str,
    payload: &Value,
    max_attempts: i32,
    progress_job_id: Option<Uuid>,
) -> QueryResult<Uuid> {
    diesel::insert_into(job_queue::table)
        .values((
            job_queue::kind.eq(kind),
            job_queue::payload.eq(payload),
            job_queue::progress_job_id.eq(progress_job_id),
            job_queue::max_attempts.eq(max_attempts.max(1)),
            job_queue::tenant_id.eq(scope.tenant_id),
            job_queue::organization_id.eq(scope.organization_id),
            job_queue::created_by_user_id.eq(scope.user_id),
            job_queue::created_by_api_key_id.eq(scope.api_key_id),
            job_queue::trace_parent.eq(stoa_core::traces::current_traceparent()),
        ))
        .returning(job_queue::id)
        .get_result(conn)
        .await
}
