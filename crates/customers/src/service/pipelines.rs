//! Pipeline create, update, delete and list.

use diesel_async::{AsyncConnection, AsyncPgConnection};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::{Operation, execute};
use stoa_core::db::Db;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{target_organization, visible};
use crate::commands::pipelines::{self as cmd, WritePipeline, may_write};
use crate::dto::{CreatePipeline, PipelineList, UpdatePipeline};
use crate::error::CustomersError;
use crate::model::{PipelineRow, PipelineState};
use crate::queries::pipelines as q;

/// Makes `state` the only default of its organization: waits for any other
/// transaction choosing one ([`q::lock_default_scope`]), then unsets the
/// current default, each as its own undoable entry ("Unset default
/// pipeline"), before the caller writes `state`. A no-op unless `state` is a
/// default. The one-default index (`customer_pipelines_one_default`) is the
/// backstop.
async fn unset_other_defaults(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    state: &PipelineState,
) -> Result<(), AppError> {
    if !state.is_default {
        return Ok(());
    }
    q::lock_default_scope(conn, state.tenant_id, state.organization_id).await?;
    let actor = ctx.actor();
    for row in q::lock_defaults(conn, state.tenant_id, state.organization_id, state.id).await? {
        let before = PipelineState::from(&row);
        may_write(ctx, &before)?;
        let after = PipelineState {
            is_default: false,
            ..before.clone()
        };
        let command = WritePipeline {
            command_id: cmd::UPDATE,
            label: "Unset default pipeline",
            before: Some(before),
            after: Some(after),
        };
        execute(conn, &actor, command).await?;
    }
    Ok(())
}

pub async fn create(
    db: &Db,
    ctx: &AuthContext,
    body: CreatePipeline,
) -> Result<(Uuid, Operation), AppError> {
    let state = PipelineState {
        id: Uuid::new_v4(),
        tenant_id: ctx.tenant()?,
        organization_id: target_organization(ctx)?,
        name: body.name.trim().to_string(),
        is_default: body.is_default.unwrap_or(false),
        created_at: OffsetDateTime::now_utc(),
    };
    may_write(ctx, &state)?;
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let id = state.id;
        unset_other_defaults(conn, ctx, &state).await?;
        let command = WritePipeline {
            command_id: cmd::CREATE,
            label: "Create pipeline",
            before: None,
            after: Some(state),
        };
        let (_, op) = execute(conn, &actor, command).await?;
        Ok((id, op))
    })
    .await
}

async fn locked(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<PipelineRow, AppError> {
    let tenant = ctx.tenant()?;
    q::lock(conn, id)
        .await?
        .filter(|p| p.tenant_id == tenant && ctx.can_see_organization(p.organization_id))
        .ok_or_else(|| CustomersError::PipelineNotFound.into())
}

pub async fn update(
    db: &Db,
    ctx: &AuthContext,
    id: Uuid,
    body: UpdatePipeline,
) -> Result<Operation, AppError> {
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = PipelineState::from(&locked(conn, ctx, id).await?);
        may_write(ctx, &before)?;
        let mut after = before.clone();
        if let Some(name) = body.name {
            after.name = name.trim().to_string();
        }
        if let Some(flag) = body.is_default {
            after.is_default = flag;
        }
        if after.is_default && !before.is_default {
            unset_other_defaults(conn, ctx, &after).await?;
        }
        let command = WritePipeline {
            command_id: cmd::UPDATE,
            label: "Update pipeline",
            before: Some(before),
            after: Some(after),
        };
        let (_, op) = execute(conn, &actor, command).await?;
        Ok(op)
    })
    .await
}

pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> Result<Operation, AppError> {
    let actor = ctx.actor();
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = PipelineState::from(&locked(conn, ctx, id).await?);
        may_write(ctx, &before)?;
        let command = WritePipeline {
            command_id: cmd::DELETE,
            label: "Delete pipeline",
            before: Some(before),
            after: None,
        };
        let (_, op) = execute(conn, &actor, command).await?;
        Ok(op)
    })
    .await
}

pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    is_default: Option<bool>,
) -> Result<PipelineList, AppError> {
    let rows = q::list(conn, ctx.tenant()?, visible(ctx), is_default).await?;
    let items: Vec<_> = rows.into_iter().map(Into::into).collect();
    Ok(PipelineList {
        total: items.len(),
        items,
    })
}
