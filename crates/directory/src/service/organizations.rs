//! Organization writes: each checks the caller's organization scope, opens
//! the transaction and runs the (undoable) command; the answer carries the
//! operation for `x-om-operation`. The handlers check the feature first.

use actix_web::http::StatusCode;
use stoa_acl::AuthContext;
use stoa_core::command::{self, Operation};
use stoa_core::db::Db;
use stoa_core::{AppError, AppResult};
use uuid::Uuid;

use crate::commands::{
    CreateOrganizationCommand, DeleteOrganizationCommand, UpdateOrganizationCommand,
};
use crate::dto::{CreateOrganization, UpdateOrganization};
use crate::error::DirectoryError;
use crate::service::{DirectoryService, PgDirectory};

/// Restricted callers may only touch organizations inside their allowed set
/// (the shared scope check, with the directory's own error).
fn check_allowed(ctx: &AuthContext, org: Option<Uuid>) -> AppResult<()> {
    if ctx.may_write_organization(org) {
        Ok(())
    } else {
        Err(DirectoryError::OrganizationNotAllowed.into())
    }
}

/// An organization outside the caller's allowed scope answers 404, as an
/// unknown one. The allowed scope, not the selection: selecting an
/// organization narrows what lists show, never what the caller may write (a
/// tenant admin at home in one branch edits the root-level organization it
/// just created).
fn check_writable(ctx: &AuthContext, id: Uuid) -> AppResult<()> {
    if ctx.may_write_organization(Some(id)) {
        Ok(())
    } else {
        Err(AppError::new(StatusCode::NOT_FOUND, "Not found"))
    }
}

/// Creates an organization in the requested tenant (else the caller's).
pub async fn create(
    db: &Db,
    ctx: &AuthContext,
    input: CreateOrganization,
) -> AppResult<(Uuid, Operation)> {
    let tenant = ctx
        .requested_tenant(input.tenant_id)?
        .ok_or(DirectoryError::TenantScopeRequired)?;
    check_allowed(ctx, input.parent_id)?;
    let actor = ctx.actor();
    db.transaction::<_, AppError, _>(|conn| {
        Box::pin(async move {
            if PgDirectory.tenant(conn, tenant).await?.is_none() {
                return Err(DirectoryError::TenantNotFound.into());
            }
            command::execute(conn, &actor, CreateOrganizationCommand { tenant, input }).await
        })
    })
    .await
}

/// A partial update of an organization of `tenant` inside the caller's
/// allowed scope; a new parent must be inside it too.
pub async fn update(
    db: &Db,
    ctx: &AuthContext,
    tenant: Uuid,
    input: UpdateOrganization,
) -> AppResult<Operation> {
    check_writable(ctx, input.id)?;
    if let Some(Some(parent)) = input.parent_id {
        check_allowed(ctx, Some(parent))?;
    }
    let actor = ctx.actor();
    let (_, op) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                command::execute(conn, &actor, UpdateOrganizationCommand { tenant, input }).await
            })
        })
        .await?;
    Ok(op)
}

/// Soft-deletes an organization of `tenant` inside the caller's allowed scope.
pub async fn delete(db: &Db, ctx: &AuthContext, tenant: Uuid, id: Uuid) -> AppResult<Operation> {
    check_writable(ctx, id)?;
    let actor = ctx.actor();
    let (_, op) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                command::execute(conn, &actor, DeleteOrganizationCommand { tenant, id }).await
            })
        })
        .await?;
    Ok(op)
}
