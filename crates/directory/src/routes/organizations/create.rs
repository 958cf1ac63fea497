//! `POST /directory/organizations`.

use actix_web::{HttpResponse, post, web};
use stoa_acl::AuthContext;
use stoa_core::command;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Json};

use super::{MANAGE, check_allowed, write_tenant};
use crate::commands::CreateOrganizationCommand;
use crate::dto::*;
use crate::error::DirectoryError;
use crate::routes::with_operation;
use crate::service::{DirectoryService, PgDirectory};

/// Creates an organization (slug defaults to the name; collisions get `-1`, `-2`, ...).
#[utoipa::path(
    tag = "Directory",
    request_body = CreateOrganization,
    security(("bearerAuth" = [])),
    responses(
        (status = 201, body = Created),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[post("/directory/organizations")]
pub async fn create_organization(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<CreateOrganization>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let body = body.into_inner();
    let tenant = write_tenant(&ctx, body.tenant_id)?;
    check_allowed(&ctx, body.parent_id)?;
    let actor = ctx.actor();
    let (id, op) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                if PgDirectory.tenant(conn, tenant).await?.is_none() {
                    return Err(DirectoryError::TenantNotFound.into());
                }
                command::execute(
                    conn,
                    &actor,
                    CreateOrganizationCommand {
                        tenant,
                        input: body,
                    },
                )
                .await
            })
        })
        .await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(Created { id }))
}
