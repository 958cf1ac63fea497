//! `PUT /directory/organizations`: a partial update.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, put, web};
use stoa_acl::AuthContext;
use stoa_core::command;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Json};

use super::{MANAGE, check_allowed};
use crate::commands::UpdateOrganizationCommand;
use crate::dto::*;
use crate::routes::with_operation;

/// Updates an organization; omitted fields keep their stored values.
#[utoipa::path(
    tag = "Directory",
    request_body = UpdateOrganization,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/directory/organizations")]
pub async fn update_organization(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<UpdateOrganization>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let body = body.into_inner();
    body.check().map_err(AppError::bad_request)?;
    let tenant = ctx.tenant()?;
    if !ctx.can_see_organization(body.id) && !ctx.is_super_admin() {
        return Err(AppError::new(StatusCode::NOT_FOUND, "Not found"));
    }
    if let Some(Some(parent)) = body.parent_id {
        check_allowed(&ctx, Some(parent))?;
    }
    let actor = ctx.actor();
    let (_, op) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                command::execute(
                    conn,
                    &actor,
                    UpdateOrganizationCommand {
                        tenant,
                        input: body,
                    },
                )
                .await
            })
        })
        .await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok::yes()))
}
