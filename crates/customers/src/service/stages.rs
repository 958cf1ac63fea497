//! Pipeline stage create, update, delete and list.

use diesel_async::{AsyncConnection, AsyncPgConnection};
use futures_util::FutureExt;
use stoa_acl::AuthContext;
use stoa_acl::Kept;
use stoa_acl::resource::{self as kit, Write};
use stoa_core::AppError;
use stoa_core::command::Operation;
use stoa_core::db::Db;
use stoa_core::http::read_cache::ReadDeps;
use time::OffsetDateTime;
use uuid::Uuid;

use super::visible;
use crate::commands::stages as cmd;
use crate::dto::{CreateStage, ReorderStages, StageList, UpdateStage};
use crate::error::CustomersError;
use crate::model::StageState;
use crate::queries::{pipelines, stages as q};

/// Creates a stage in its pipeline's organization.
pub async fn create(
    db: &Db,
    ctx: &AuthContext,
    body: CreateStage,
) -> Result<(Uuid, Operation), AppError> {
    let tenant = ctx.tenant()?;
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        // The pipeline is locked so it cannot be deleted under the new stage.
        let pipeline = pipelines::lock(conn, body.pipeline_id)
            .await?
            .filter(|p| p.tenant_id == tenant && ctx.can_see_organization(p.organization_id))
            .ok_or(CustomersError::PipelineNotFound)?;
        let state = StageState {
            id: Uuid::new_v4(),
            tenant_id: tenant,
            organization_id: pipeline.organization_id,
            pipeline_id: pipeline.id,
            label: body.label.trim().to_string(),
            order: body.order.unwrap_or(0),
            color: body.color,
            icon: body.icon,
            created_at: OffsetDateTime::now_utc(),
        };
        let id = state.id;
        let how = Write::new(cmd::CREATE, "Create pipeline stage");
        let (_, op) = kit::create_in(conn, ctx, None, how, state).await?;
        Ok((id, op))
    })
    .await
}

pub async fn update(
    db: &Db,
    ctx: &AuthContext,
    id: Uuid,
    body: UpdateStage,
) -> Result<Operation, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let how = Write::new(cmd::UPDATE, "Update pipeline stage");
        let (_, op) =
            kit::update_in::<StageState, _>(conn, ctx, None, how, id, None, |_, after| {
                if let Some(label) = body.label {
                    after.label = label.trim().to_string();
                }
                if let Some(order) = body.order {
                    after.order = order;
                }
                if let Some(color) = body.color {
                    after.color = color;
                }
                if let Some(icon) = body.icon {
                    after.icon = icon;
                }
                async { Ok(()) }.boxed()
            })
            .await?;
        Ok(op)
    })
    .await
}

pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> Result<Operation, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let how = Write::new(cmd::DELETE, "Delete pipeline stage");
        kit::delete_in::<StageState>(conn, ctx, how, id, None).await
    })
    .await
}

/// `POST /customers/pipeline-stages/reorder`: gives each named stage its
/// new order in one transaction, one undoable entry per stage whose order
/// changes (`customers.pipeline_stages.reorder`). Every stage must be of the
/// caller's tenant in an organization it sees (404 otherwise) and may write
/// (403); the stages are locked in id order, so concurrent reorders queue
/// rather than deadlock. Answers the last entry's operation (`None` when no
/// order changed).
pub async fn reorder(
    db: &Db,
    ctx: &AuthContext,
    body: ReorderStages,
) -> Result<Option<Operation>, AppError> {
    let mut wanted: Vec<(Uuid, i32)> = body.stages.iter().map(|s| (s.id, s.order)).collect();
    wanted.sort_by_key(|(id, _)| *id);
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let mut changes = Vec::with_capacity(wanted.len());
        for (id, order) in &wanted {
            let before = kit::locked_in::<StageState>(conn, ctx, *id, None).await?;
            if before.order != *order {
                let mut after = before.clone();
                after.order = *order;
                changes.push((before, after));
            }
        }
        let mut last = None;
        for (before, after) in changes {
            let how = Write::new(cmd::REORDER, "Reorder pipeline stages");
            let (_, op) = kit::save_in(conn, ctx, None, how, Some(before), Some(after)).await?;
            last = Some(op);
        }
        Ok(last)
    })
    .await
}

pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    pipeline: Option<Uuid>,
) -> Result<Kept<StageList>, AppError> {
    let tenant = ctx.tenant()?;
    let deps = ReadDeps::new(crate::queries::PIPELINES_READ_DEPS, Some(tenant));
    let rows = q::list(conn, tenant, visible(ctx), pipeline, deps).await?;
    Ok(Kept::of_rows(rows, deps).map(|rows| {
        let items: Vec<_> = rows.into_iter().map(Into::into).collect();
        StageList {
            total: items.len(),
            items,
        }
    }))
}
