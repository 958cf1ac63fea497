//! Deal create, update, delete and detail.

use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde_json::Value;
use stoa_acl::resource::{self as kit, Write};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::AppError;
use stoa_core::command::{Actor, Operation};
use stoa_core::db::Db;
use stoa_core::http::read_cache::ReadDeps;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{target_organization, visible};
use crate::commands::deals as cmd;
use crate::dto::{CreateDeal, DealDetail, DealOwner, DetailStage, UpdateDeal};
use crate::error::CustomersError;
use crate::model::DealState;
use crate::queries::{deals as q, pipelines, stages};

fn trimmed(value: Option<String>) -> Option<String> {
    value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Fills the pipeline and the stage label from the stage, and checks the
/// pipeline (in the deal's tenant and organization) and the amount's currency.
async fn settle_pipeline(
    conn: &mut AsyncPgConnection,
    state: &mut DealState,
    pipeline_given: bool,
) -> Result<(), AppError> {
    if let Some(stage_id) = state.pipeline_stage_id {
        let stage = stages::find(conn, state.tenant_id, stage_id)
            .await?
            .filter(|s| s.organization_id == state.organization_id)
            .ok_or(CustomersError::StageNotFound)?;
        if pipeline_given && state.pipeline_id.is_some_and(|p| p != stage.pipeline_id) {
            return Err(CustomersError::StageOfOtherPipeline.into());
        }
        state.pipeline_id = Some(stage.pipeline_id);
        state.pipeline_stage = Some(stage.label);
    } else {
        state.pipeline_stage = None;
        if let Some(pipeline) = state.pipeline_id {
            pipelines::find(conn, state.tenant_id, pipeline)
                .await?
                .filter(|p| p.organization_id == state.organization_id)
                .ok_or(CustomersError::OtherOrganization)?;
        }
    }
    if state.value_amount.is_some() && state.value_currency.is_none() {
        return Err(CustomersError::CurrencyRequired.into());
    }
    Ok(())
}

/// Creates a deal in the caller's organization.
pub async fn create(
    db: &Db,
    ctx: &AuthContext,
    users: &dyn UserDirectory,
    body: CreateDeal,
) -> Result<(Uuid, Operation), AppError> {
    let tenant = ctx.tenant()?;
    let organization = target_organization(ctx)?;
    let mut state = DealState {
        id: Uuid::new_v4(),
        tenant_id: tenant,
        organization_id: organization,
        title: body.title.trim().to_string(),
        description: trimmed(body.description),
        status: trimmed(body.status).unwrap_or_else(|| "open".into()),
        pipeline_stage: None,
        pipeline_id: body.pipeline_id,
        pipeline_stage_id: body.pipeline_stage_id,
        value_amount: body.value_amount,
        value_currency: body.value_currency,
        probability: body.probability,
        expected_close_at: body.expected_close_at.map(|d| d.0),
        owner_user_id: body.owner_user_id,
        source: trimmed(body.source),
        closure_outcome: body.closure_outcome,
        loss_notes: trimmed(body.loss_notes),
        created_at: OffsetDateTime::now_utc(),
    };
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        settle_pipeline(conn, &mut state, true).await?;
        let id = state.id;
        let how = Write::new(cmd::CREATE, "Create deal");
        let (_, op) = kit::create_in(conn, ctx, Some(users), how, state).await?;
        Ok((id, op))
    })
    .await
}

/// Applies an update body to a state.
fn apply(state: &mut DealState, body: UpdateDeal) {
    if let Some(title) = body.title {
        state.title = title.trim().to_string();
    }
    if let Some(v) = body.description {
        state.description = trimmed(v);
    }
    if let Some(status) = trimmed(body.status) {
        state.status = status;
    }
    match (body.pipeline_id, body.pipeline_stage_id) {
        (_, Some(stage)) => {
            state.pipeline_stage_id = stage;
            if let Some(pipeline) = body.pipeline_id {
                state.pipeline_id = pipeline;
            }
        }
        (Some(pipeline), None) => {
            if pipeline != state.pipeline_id {
                // Another pipeline (or none): the old stage no longer fits.
                state.pipeline_stage_id = None;
            }
            state.pipeline_id = pipeline;
        }
        (None, None) => {}
    }
    if let Some(v) = body.value_amount {
        state.value_amount = v;
    }
    if let Some(v) = body.value_currency {
        state.value_currency = v;
    }
    if let Some(v) = body.probability {
        state.probability = v;
    }
    if let Some(v) = body.expected_close_at {
        state.expected_close_at = v.map(|d| d.0);
    }
    if let Some(v) = body.owner_user_id {
        state.owner_user_id = v;
    }
    if let Some(v) = body.source {
        state.source = trimmed(v);
    }
    if let Some(v) = body.closure_outcome {
        state.closure_outcome = v;
    }
    if let Some(v) = body.loss_notes {
        state.loss_notes = trimmed(v);
    }
}

/// Updates deal `id`; `expected` is the optimistic-lock header's `updatedAt`.
pub async fn update(
    db: &Db,
    ctx: &AuthContext,
    users: &dyn UserDirectory,
    id: Uuid,
    body: UpdateDeal,
    expected: Option<OffsetDateTime>,
) -> Result<Operation, AppError> {
    let by = WrittenBy::caller(ctx);
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| update_in(conn, ctx, users, id, body, expected, by).await)
        .await
}

/// Who a write is recorded as: the command-bus actor (normally
/// `ctx.actor()`; a rule's write is `system` work) and the action-log
/// context added to the entry.
pub struct WrittenBy {
    pub actor: Actor,
    pub context: Option<Value>,
}

impl WrittenBy {
    /// The caller's own write: `ctx.actor()`, no added context.
    pub fn caller(ctx: &AuthContext) -> Self {
        Self {
            actor: ctx.actor(),
            context: None,
        }
    }
}

/// [`update`] as a step of the caller's transaction on `conn` (the AI
/// confirm, a rule's `SET_FIELD`), recorded as `by`: locks the deal, checks
/// it for `ctx` exactly as the route's update and writes it through the
/// update command; the caller commits or rolls back.
pub async fn update_in(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    users: &dyn UserDirectory,
    id: Uuid,
    body: UpdateDeal,
    expected: Option<OffsetDateTime>,
    by: WrittenBy,
) -> Result<Operation, AppError> {
    let WrittenBy { actor, context } = by;
    let how = Write::new(cmd::UPDATE, "Update deal").by(actor, context);
    let pipeline_given = body.pipeline_id.is_some();
    let (_, op) =
        kit::update_in::<DealState, _>(conn, ctx, Some(users), how, id, expected, |conn, after| {
            apply(after, body);
            Box::pin(settle_pipeline(conn, after, pipeline_given))
        })
        .await?;
    Ok(op)
}

/// Deletes deal `id` for good (undo puts it back with the same id).
pub async fn delete(
    db: &Db,
    ctx: &AuthContext,
    id: Uuid,
    expected: Option<OffsetDateTime>,
) -> Result<Operation, AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let how = Write::new(cmd::DELETE, "Delete deal");
        kit::delete_in::<DealState>(conn, ctx, how, id, expected).await
    })
    .await
}

/// `GET /customers/deals/{id}`: the deal, its pipeline's stages and its owner.
pub async fn detail(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    users: &dyn UserDirectory,
    id: Uuid,
) -> Result<DealDetail, AppError> {
    let tenant = ctx.tenant()?;
    let row = q::find(conn, tenant, id)
        .await?
        .filter(|d| ctx.can_see_organization(d.organization_id))
        .ok_or(CustomersError::DealNotFound)?;
    let (pipeline_name, pipeline_stages) = match row.pipeline_id {
        Some(pipeline) => {
            let name = pipelines::find(conn, tenant, pipeline)
                .await?
                .map(|p| p.name);
            let deps = ReadDeps::new(crate::queries::PIPELINES_READ_DEPS, Some(tenant));
            let list = stages::list(conn, tenant, visible(ctx), Some(pipeline), deps).await?;
            let stages = list
                .into_iter()
                .map(|(s, _)| DetailStage {
                    id: s.id,
                    label: s.label,
                    order: s.position,
                    color: s.color,
                    icon: s.icon,
                })
                .collect();
            (name, stages)
        }
        None => (None, Vec::new()),
    };
    let owner = match row.owner_user_id {
        Some(owner) => {
            let names = users.display_names(conn, &[owner]).await?;
            Some(DealOwner {
                id: owner,
                name: names.get(&owner).cloned(),
            })
        }
        None => None,
    };
    Ok(DealDetail {
        deal: row.into(),
        pipeline_name,
        pipeline_stages,
        owner,
    })
}
