//! Tenant writes (super admins): each runs its command in its own
//! transaction (logged, not undoable). The handlers check the feature and
//! the super-admin flag first.

use std::sync::Arc;

use stoa_acl::{AuthContext, Registry};
use stoa_core::AppResult;
use stoa_core::db::Db;
use uuid::Uuid;

use crate::commands::TenantCommand;
use crate::dto::{CreateTenant, UpdateTenant};

/// Creates a tenant provisioned with every module's seeders of `registry`.
pub async fn create(
    db: &Db,
    ctx: &AuthContext,
    input: CreateTenant,
    registry: Arc<Registry>,
) -> AppResult<Uuid> {
    run(db, ctx, TenantCommand::Create(input, registry)).await
}

/// A partial update of a tenant.
pub async fn update(db: &Db, ctx: &AuthContext, input: UpdateTenant) -> AppResult<()> {
    run(db, ctx, TenantCommand::Update(input)).await.map(drop)
}

/// Soft-deletes the tenant `id`.
pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> AppResult<()> {
    run(db, ctx, TenantCommand::Delete(id)).await.map(drop)
}

/// Runs a tenant command in its own transaction.
async fn run(db: &Db, ctx: &AuthContext, command: TenantCommand) -> AppResult<Uuid> {
    let actor = ctx.actor();
    let (id, _) = stoa_core::command::run(db, &actor, command).await?;
    Ok(id)
}
