//! Pipeline writes: create, update, delete.

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::tracked::{Tracked, entry, lock_row};
use stoa_core::command::{Actor, Command, LogEntry};
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

/// Writes a pipeline's new state (`None`: deletes it; 409 while stages or
/// deals still point at it).
pub struct WritePipeline {
    pub command_id: &'static str,
    pub label: &'static str,
    pub before: Option<PipelineState>,
    pub after: Option<PipelineState>,
}

impl Command for WritePipeline {
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
            let written = write(conn, self.before.as_ref(), self.after.as_ref()).await?;
            Ok((
                (),
                pipeline_entry(self.label, self.before.as_ref(), written.as_ref()),
            ))
        })
    }
}

async fn write(
    conn: &mut AsyncPgConnection,
    before: Option<&PipelineState>,
    after: Option<&PipelineState>,
) -> Result<Option<PipelineState>, AppError> {
    match (after, before) {
        (Some(after), _) => Ok(Some(PipelineState::from(&upsert(conn, after).await?))),
        (None, Some(before)) => {
            delete(conn, before.id).await?;
            Ok(None)
        }
        (None, None) => Ok(None),
    }
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

/// The forward checks for a pipeline state the actor leaves or writes.
pub fn may_write(ctx: &AuthContext, state: &PipelineState) -> Result<(), AppError> {
    ctx.require(PIPELINES_MANAGE)?;
    if ctx.tenant_id != Some(state.tenant_id) {
        return Err(CustomersError::PipelineNotFound.into());
    }
    ctx.require_organizations([Some(state.organization_id)])
}

impl Tracked for PipelineState {
    const KIND: &'static str = PIPELINE_KIND;

    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        lock_row(conn, "customer_pipelines", id).await
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

    fn view(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    async fn authorize(
        _: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let ctx = AuthContext::of(actor)?;
        for state in [current, target].into_iter().flatten() {
            may_write(ctx, state)?;
        }
        Ok(())
    }
}
