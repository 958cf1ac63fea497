//! Pipeline stages as a resource of the kit (`stoa_acl::resource`):
//! create, update, delete, reorder.

use diesel_async::AsyncPgConnection;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_acl::resource::{self, Resource};
use stoa_core::AppError;
use stoa_core::command::LogEntry;
use stoa_core::command::tracked::{Tracked, entry};
use uuid::Uuid;

use crate::PIPELINES_MANAGE;
use crate::error::{CustomersError, in_use};
use crate::model::StageState;
use crate::queries::{pipelines, stages as q};

pub const STAGE_KIND: &str = "customers.pipeline_stage";
pub const CREATE: &str = "customers.pipeline_stages.create";
pub const UPDATE: &str = "customers.pipeline_stages.update";
pub const DELETE: &str = "customers.pipeline_stages.delete";
/// One stage's new order, written by `POST /customers/pipeline-stages/reorder`.
pub const REORDER: &str = "customers.pipeline_stages.reorder";

fn stage_entry(label: &str, before: Option<&StageState>, after: Option<&StageState>) -> LogEntry {
    let Some(any) = after.or(before) else {
        return LogEntry::default();
    };
    let mut log = entry(label, any.id, before, after);
    log.organization_id = Some(any.organization_id);
    log.parent_resource_kind = Some(crate::commands::pipelines::PIPELINE_KIND.into());
    log.parent_resource_id = Some(any.pipeline_id.to_string());
    let verb = match (before, after) {
        (None, _) => "created",
        (_, None) => "deleted",
        _ => "updated",
    };
    log.with_event(
        format!("customers.pipeline_stage.{verb}"),
        json!({"id": any.id, "pipelineId": any.pipeline_id, "tenantId": any.tenant_id, "organizationId": any.organization_id}),
    )
}

async fn delete(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
    use diesel_async::AsyncConnection;
    conn.transaction::<_, diesel::result::Error, _>(async move |conn| {
        q::delete(conn, id).await.map(|_| ())
    })
    .await
    .map_err(|e| AppError::from(in_use(e, CustomersError::StageInUse)))
}

/// A stage's pipeline must be of the same tenant and organization.
async fn check_pipeline(conn: &mut AsyncPgConnection, state: &StageState) -> Result<(), AppError> {
    match pipelines::find(conn, state.tenant_id, state.pipeline_id).await? {
        Some(p) if p.organization_id == state.organization_id => Ok(()),
        _ => Err(CustomersError::PipelineNotFound.into()),
    }
}

impl Tracked for StageState {
    const KIND: &'static str = STAGE_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        Ok(q::lock(conn, id).await?.as_ref().map(StageState::from))
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        q::upsert(conn, self).await?;
        Ok(())
    }

    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        delete(conn, id).await
    }

    fn view(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    fn parent(&self) -> Option<(&'static str, String)> {
        Some((
            crate::commands::pipelines::PIPELINE_KIND,
            self.pipeline_id.to_string(),
        ))
    }

    stoa_acl::kit_authorize!();
}

/// A stage through the resource kit: `customers.pipelines.manage`, its
/// organization and its pipeline (same tenant and organization).
impl Resource for StageState {
    const TABLE: &'static str = "customer_pipeline_stages";
    const FEATURE: &'static str = PIPELINES_MANAGE;
    const SELECTION_HIDES: bool = true;
    type Services = ();

    stoa_acl::resource_identity!();
    fn not_found() -> AppError {
        AppError::not_found("Pipeline stage not found")
    }
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        stage_entry(label, before, after)
    }
    async fn check(
        conn: &mut AsyncPgConnection,
        _: &AuthContext,
        _: Option<&()>,
        target: &Self,
        previous: Option<&Self>,
    ) -> Result<(), AppError> {
        // A stage keeps its pipeline: only a new or restored one is checked.
        if previous.is_some_and(|p| p.pipeline_id == target.pipeline_id) {
            return Ok(());
        }
        check_pipeline(conn, target).await
    }
    /// One statement: the upsert returns the row as stored.
    async fn save(&self, conn: &mut AsyncPgConnection) -> Result<Self, AppError> {
        Ok(StageState::from(&q::upsert(conn, self).await?))
    }
}
