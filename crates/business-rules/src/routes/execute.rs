//! `POST /business_rules/execute` and `/business_rules/execute/{ruleId}`.

use actix_web::{HttpResponse, post, web};
use stoa_acl::{AuthContext, Services};
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json, Path};

use super::uuid_or;
use crate::EXECUTE;
use crate::dto::*;
use crate::error::RulesError;
use crate::service::execute as svc;

/// Runs the applicable rules (entity type, event type) on `data`. A dry run
/// evaluates and describes the actions but leaves no trace.
#[utoipa::path(
    tag = "Business rules",
    request_body = ExecuteBody,
    responses(
        (status = 200, body = ExecuteResult),
    )
)]
#[post("/business_rules/execute")]
pub async fn execute(
    ctx: AuthContext,
    services: web::Data<Services>,
    body: Json<ExecuteBody>,
) -> AppResult<web::Json<ExecuteResult>> {
    ctx.require(EXECUTE)?;
    Ok(web::Json(
        svc::execute(&services, &ctx, body.into_inner()).await?,
    ))
}

/// Runs one rule by its uuid, whatever its entity and event type.
#[utoipa::path(
    tag = "Business rules",
    params(("ruleId" = String, Path, description = "Rule id (uuid)")),
    request_body = ExecuteOneBody,
    responses(
        (status = 200, body = ExecuteOneResult, description = "Ran, or was disabled / outside its window (`success: false`)"),
        (status = 400, body = ErrorBody, description = "`Invalid rule ID`"),
        (status = 404, body = ExecuteOneResult, description = "`Rule not found`"),
    )
)]
#[post("/business_rules/execute/{ruleId}")]
pub async fn execute_rule(
    ctx: AuthContext,
    services: web::Data<Services>,
    id: Path<String>,
    body: Json<ExecuteOneBody>,
) -> AppResult<HttpResponse> {
    ctx.require(EXECUTE)?;
    let id = uuid_or(Some(id.as_str()), RulesError::InvalidExecuteRuleId)?;
    let (found, result) = svc::execute_one(&services, &ctx, id, body.into_inner()).await?;
    Ok(if found {
        HttpResponse::Ok().json(result)
    } else {
        HttpResponse::NotFound().json(result)
    })
}
