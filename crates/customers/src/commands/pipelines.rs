//! Pipelines as a resource of the kit (`stoa_acl::resource`): create,
//! update, delete.

use diesel_async::AsyncPgConnection;
use serde_json::json;
use stoa_acl::resource::{self, Resource};
use stoa_core::AppError;
use stoa_core::command::LogEntry;
use stoa_core::command::tracked::{Tracked, entry};
use uuid::Uuid;

use crate::PIPELINES_MANAGE;
use crate::error::{CustomersError, default_taken, in_use};
use crate::model::PipelineState;
use crate::queries::pipelines as q;

pub const PIPELINE_KIND: &str = "customers.pipeline";
pub const CREATE: &str = "customers.pipelines.create";
pub const UPDATE: &str = "customers.pipelines.update";
pub const DELETE: &str = "customers.pipelines.delete";

fn pipeline_entry(
    label: &str,
    before: Option<&PipelineState>,
    after: Option<&PipelineState>,
) -> LogEntry {
    let Some(any) = after.or(before) else {
        return LogEntry::default();
    };
    let mut log = entry(label, any.id, before, after);
    log.organization_id = Some(any.organization_id);
    let verb = match (before, after) {
        (None, _) => "created",
        (_, None) => "deleted",
        _ => "updated",
    };
    log.with_event(
        format!("customers.pipeline.{verb}"),
        json!({"id": any.id, "tenantId": any.tenant_id, "organizationId": any.organization_id}),
    )
}

/// Writes a state; a second default of its organization is refused (409).
async fn upsert(
    conn: &mut AsyncPgConnection,
    state: &PipelineState,
) -> Result<crate::model::PipelineRow, AppError> {
    q::upsert(conn, state)
        .await
        .map_err(|e| AppError::from(default_taken(e)))
}

/// Deletes in a savepoint, so a foreign-key refusal (409) leaves the
/// transaction usable.
async fn delete(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
    use diesel_async::AsyncConnection;
    conn.transaction::<_, diesel::result::Error, _>(async move |conn| {
        q::delete(conn, id).await.map(|_| ())
    })
    .await
    .map_err(|e| AppError::from(in_use(e, CustomersError::PipelineInUse)))
}

impl Tracked for PipelineState {
    const KIND: &'static str = PIPELINE_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        Ok(q::lock(conn, id).await?.as_ref().map(PipelineState::from))
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        upsert(conn, self).await?;
        Ok(())
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        delete(conn, id).await
    }

    stoa_acl::tracked_by_kit!();
}

/// A pipeline through the resource kit: `customers.pipelines.manage` and
/// its organization.
impl Resource for PipelineState {
    const TABLE: &'static str = "customer_pipelines";
    const FEATURE: &'static str = PIPELINES_MANAGE;
    const SELECTION_HIDES: bool = true;
    type Services = ();

    stoa_acl::resource_identity!();
    fn not_found() -> AppError {
        CustomersError::PipelineNotFound.into()
    }
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        pipeline_entry(label, before, after)
    }
    /// One statement: the upsert returns the row as stored.
    async fn save(&self, conn: &mut AsyncPgConnection) -> Result<Self, AppError> {
        Ok(PipelineState::from(&upsert(conn, self).await?))
    }
}
