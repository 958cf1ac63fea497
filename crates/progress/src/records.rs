//! Progress records as the job queue keeps them: stoa-progress's
//! implementation of [`stoa_jobs::JobRecords`], over the functions of
//! `service.rs`. The workers get it with `Workers::with_records(records())`;
//! [`crate::enqueue_job`] creates a job's record with it.

use std::sync::Arc;

use diesel::QueryResult;
use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::Value;
use stoa_jobs::{JobRecords, NewRecord};
use uuid::Uuid;

use crate::service::{self, NewJob};

/// The `progress_jobs` rows of queued jobs.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProgressRecords;

/// What the workers and the enqueue functions keep records with.
pub fn records() -> Arc<dyn JobRecords> {
    Arc::new(ProgressRecords)
}

impl JobRecords for ProgressRecords {
    fn create<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        record: NewRecord,
    ) -> BoxFuture<'a, QueryResult<Uuid>> {
        Box::pin(async move {
            let job = NewJob {
                job_type: record.kind,
                name: record.name,
                description: record.description,
                total_count: record.total_count,
                cancellable: record.cancellable,
                meta: record.meta,
                tenant_id: record.tenant_id,
                organization_id: record.organization_id,
                started_by_user_id: record.started_by_user_id,
                ..Default::default()
            };
            service::create(conn, &job).await
        })
    }

    fn start<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async move { service::start(conn, id).await.map(drop) })
    }

    fn heartbeat<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async move { service::heartbeat(conn, id).await.map(drop) })
    }

    fn add_processed<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
        items: i32,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async move { service::add_processed(conn, id, items).await.map(drop) })
    }

    fn complete<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
        summary: Option<Value>,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async move { service::complete(conn, id, summary).await.map(drop) })
    }

    fn fail<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
        message: &'a str,
        summary: Option<Value>,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async move {
            service::fail_with(conn, id, message, summary)
                .await
                .map(drop)
        })
    }

    fn cancelled<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, QueryResult<()>> {
        Box::pin(async move { service::mark_cancelled(conn, id).await.map(drop) })
    }

    fn cancel_requested<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, QueryResult<bool>> {
        Box::pin(async move { service::cancel_requested(conn, id).await })
    }
}
