//! Pipeline stage writes: create, update, delete, reorder.

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::tracked::{Tracked, entry, lock_row};
use stoa_core::command::{Actor, Command, LogEntry};
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

/// Writes a stage's new state (`None`: deletes it; 409 while deals use it).
pub struct WriteStage {
    pub command_id: &'static str,
    pub label: &'static str,
    pub before: Option<StageState>,
    pub after: Option<StageState>,
}

impl Command for WriteStage {
    type Output = ();
    fn id(&self) -> &'static str {
        self.command_id
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let written = match (&self.after, &self.before) {
                (Some(after), _) => Some(StageState::from(&q::upsert(conn, after).await?)),
                (None, Some(before)) => {
                    delete(conn, before.id).await?;
                    None
                }
                (None, None) => None,
            };
            Ok((
                (),
                stage_entry(self.label, self.before.as_ref(), written.as_ref()),
            ))
        })
    }
}

async fn delete(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
    use diesel_async::AsyncConnection;
    conn.transaction::<_, diesel::result::Error, _>(async move |conn| {
        q::delete(conn, id).await.map(|_| ())
    })
    .await
    .map_err(|e| AppError::from(in_use(e, CustomersError::StageInUse)))
}

/// The forward checks for a stage state the actor leaves or writes.
pub fn may_write(ctx: &AuthContext, state: &StageState) -> Result<(), AppError> {
    ctx.require(PIPELINES_MANAGE)?;
    if ctx.tenant_id != Some(state.tenant_id) {
        return Err(CustomersError::StageNotFound.into());
    }
    ctx.require_organizations([Some(state.organization_id)])
}

/// A stage's pipeline must be of the same tenant and organization.
pub async fn check_pipeline(
    conn: &mut AsyncPgConnection,
    state: &StageState,
) -> Result<(), AppError> {
    match pipelines::find(conn, state.tenant_id, state.pipeline_id).await? {
        Some(p) if p.organization_id == state.organization_id => Ok(()),
        _ => Err(CustomersError::PipelineNotFound.into()),
    }
}

impl Tracked for StageState {
    const KIND: &'static str = STAGE_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        lock_row(conn, "customer_pipeline_stages", id).await
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

    async fn authorize(
        conn: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let ctx = AuthContext::of(actor)?;
        for state in [current, target].into_iter().flatten() {
            may_write(ctx, state)?;
        }
        if let Some(target) = target {
            check_pipeline(conn, target).await?;
        }
        Ok(())
    }
}
