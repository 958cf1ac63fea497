//! `/business_rules/sets/{id}/members`: add, change, remove.

use actix_web::{HttpResponse, delete, post, put, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json, Path, Query};

use super::uuid_or;
use crate::MANAGE_SETS;
use crate::dto::*;
use crate::error::RulesError;
use crate::service::sets;

#[utoipa::path(
    tag = "Business rules",
    params(("id" = String, Path, description = "Rule set id (uuid)")),
    request_body = AddMember,
    responses(
        (status = 201, body = Created),
        (status = 404, body = ErrorBody, description = "`Rule set not found` or `Rule not found`"),
        (status = 409, body = ErrorBody, description = "`Rule is already a member of this set`"),
        (status = 422, body = ErrorBody),
    )
)]
#[post("/business_rules/sets/{id}/members")]
pub async fn add_member(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
    body: Json<AddMember>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE_SETS)?;
    let set = uuid_or(Some(id.as_str()), RulesError::SetNotFound)?;
    let (id, op) = sets::add_member(&db, &ctx, set, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(Created { id }))
}

#[utoipa::path(
    tag = "Business rules",
    params(("id" = String, Path, description = "Rule set id (uuid)")),
    request_body = UpdateMember,
    responses(
        (status = 200, body = Done),
        (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[put("/business_rules/sets/{id}/members")]
pub async fn update_member(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
    body: Json<UpdateMember>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE_SETS)?;
    let set = uuid_or(Some(id.as_str()), RulesError::SetNotFound)?;
    let op = sets::update_member(&db, &ctx, set, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Done { ok: true }))
}

#[utoipa::path(
    tag = "Business rules",
    params(("id" = String, Path, description = "Rule set id (uuid)"), MemberIdQuery),
    responses(
        (status = 200, body = Done),
        (status = 400, body = ErrorBody, description = "`Member id is required`"),
        (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[delete("/business_rules/sets/{id}/members")]
pub async fn remove_member(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
    q: Query<MemberIdQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE_SETS)?;
    let set = uuid_or(Some(id.as_str()), RulesError::SetNotFound)?;
    let member = uuid_or(q.member_id.as_deref(), RulesError::MemberIdRequired)?;
    let op = sets::remove_member(&db, &ctx, set, member).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Done { ok: true }))
}
