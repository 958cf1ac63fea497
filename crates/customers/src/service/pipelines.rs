//! Pipeline create, update, delete and list.

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

use super::{target_organization, visible};
use crate::commands::pipelines as cmd;
use crate::dto::{CreatePipeline, PipelineList, UpdatePipeline};
use crate::model::PipelineState;
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
    for row in q::lock_defaults(conn, state.tenant_id, state.organization_id, state.id).await? {
        let how = Write::new(cmd::UPDATE, "Unset default pipeline");
        kit::update_in::<PipelineState, _>(conn, ctx, None, how, row.id, None, |_, p| {
            p.is_default = false;
            async { Ok(()) }.boxed()
        })
        .await?;
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
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let id = state.id;
        kit::may_write(ctx, &state)?;
        unset_other_defaults(conn, ctx, &state).await?;
        let how = Write::new(cmd::CREATE, "Create pipeline");
        let (_, op) = kit::create_in(conn, ctx, None, how, state).await?;
        Ok((id, op))
    })
    .await
}

pub async fn update(
    db: &Db,
    ctx: &AuthContext,
    id: Uuid,
    body: UpdatePipeline,
) -> Result<Operation, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = kit::locked_in::<PipelineState>(conn, ctx, id, None).await?;
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
        let how = Write::new(cmd::UPDATE, "Update pipeline");
        let (_, op) = kit::save_in(conn, ctx, None, how, Some(before), Some(after)).await?;
        Ok(op)
    })
    .await
}

pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> Result<Operation, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let how = Write::new(cmd::DELETE, "Delete pipeline");
        kit::delete_in::<PipelineState>(conn, ctx, how, id, None).await
    })
    .await
}

pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    is_default: Option<bool>,
) -> Result<Kept<PipelineList>, AppError> {
    let tenant = ctx.tenant()?;
    let deps = ReadDeps::new(crate::queries::PIPELINES_READ_DEPS, Some(tenant));
    let rows = q::list(conn, tenant, visible(ctx), is_default, deps).await?;
    Ok(Kept::of_rows(rows, deps).map(|rows| {
        let items: Vec<_> = rows.into_iter().map(Into::into).collect();
        PipelineList {
            total: items.len(),
            items,
        }
    }))
}
