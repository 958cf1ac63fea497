//! `/business_rules/sets`: list, create, update, delete, detail.

use actix_web::{HttpRequest, HttpResponse, delete, get, post, put, web};
use stoa_acl::AuthContext;
use stoa_core::collection::WithId;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Json, Path, Query};

use super::uuid_or;
use crate::dto::*;
use crate::error::RulesError;
use crate::service::{set_list, sets};
use crate::{MANAGE_SETS, VIEW};

#[utoipa::path(
    tag = "Business rules",
    params(SetListQuery, ListParams),
    responses(
        (status = 200, body = SetList),
    )
)]
#[get("/business_rules/sets")]
pub async fn list_sets(
    http: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<SetListQuery>,
    params: Query<ListParams>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let kept = {
        let mut conn = db.conn().await?;
        set_list::list(&mut conn, &ctx, &q, &params).await?
    };
    // Kept: the same page again is the session check alone while no set
    // of the tenant (and no ACL) changed.
    kept.answer(&http, &ctx)
}

#[utoipa::path(
    tag = "Business rules",
    request_body = CreateSet,
    responses(
        (status = 201, body = Created),
        (status = 409, body = ErrorBody, description = "The setId is taken in the tenant"),
        (status = 422, body = ErrorBody),
    )
)]
#[post("/business_rules/sets")]
pub async fn create_set(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<CreateSet>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE_SETS)?;
    let (id, op) = sets::create(&db, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(Created { id }))
}

#[utoipa::path(
    tag = "Business rules",
    params(("id" = Option<String>, Query, description = "Id, when not in the body")),
    request_body = UpdateSet,
    responses(
        (status = 200, body = Done),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[put("/business_rules/sets")]
pub async fn update_set(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: WithId<Json<UpdateSet>>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE_SETS)?;
    let id = uuid_or(body.id.0.as_deref(), RulesError::SetIdRequired)?;
    let op = sets::update(&db, &ctx, id, body.body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Done { ok: true }))
}

#[utoipa::path(
    tag = "Business rules",
    params(IdQuery),
    responses(
        (status = 200, body = Done),
        (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[delete("/business_rules/sets")]
pub async fn delete_set(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<IdQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE_SETS)?;
    let id = uuid_or(q.id.as_deref(), RulesError::SetIdRequired)?;
    let op = sets::delete(&db, &ctx, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Done { ok: true }))
}

#[utoipa::path(
    tag = "Business rules",
    params(("id" = String, Path, description = "Rule set id (uuid)")),
    responses(
        (status = 200, body = SetDetail),
        (status = 400, body = ErrorBody, description = "`Invalid rule set id`"),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/business_rules/sets/{id}")]
pub async fn get_set(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
) -> AppResult<web::Json<SetDetail>> {
    ctx.require(VIEW)?;
    let id = uuid_or(Some(id.as_str()), RulesError::InvalidSetId)?;
    let mut conn = db.conn().await?;
    Ok(web::Json(sets::get(&mut conn, &ctx, id).await?))
}
