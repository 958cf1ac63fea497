//! `/business_rules/rules`: list, create, update, delete, detail.

use actix_web::{HttpRequest, HttpResponse, delete, get, post, put, web};
use stoa_acl::{AuthContext, Services};
use stoa_core::collection::WithId;
use stoa_core::command::with_operation;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Json, Path, Query};

use super::uuid_or;
use crate::dto::*;
use crate::error::RulesError;
use crate::service::{rule_list, rules};
use crate::{MANAGE, VIEW};

/// Rules of the caller's tenant in the organizations it sees.
#[utoipa::path(
    tag = "Business rules",
    params(RuleListQuery, ListParams),
    responses(
        (status = 200, body = RuleList),
    )
)]
#[get("/business_rules/rules")]
pub async fn list_rules(
    http: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<RuleListQuery>,
    params: Query<ListParams>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let kept = {
        let mut conn = db.conn().await?;
        rule_list::list(&mut conn, &ctx, &q, &params).await?
    };
    // Kept: the same page again is the session check alone while no rule
    // of the tenant (and no ACL) changed.
    kept.answer(&http, &ctx)
}

/// Creates a rule; its condition and actions are checked first (400 naming
/// each problem's path). A rule calling webhooks gets its signing secret,
/// answered this once (`webhookSecret`).
#[utoipa::path(
    tag = "Business rules",
    request_body = CreateRule,
    responses(
        (status = 201, body = CreatedRule),
        (status = 400, body = ErrorBody, description = "Invalid body, condition or actions; a refused webhook address"),
        (status = 409, body = ErrorBody, description = "The ruleId is taken in the tenant"),
        (status = 422, body = ErrorBody, description = "Refused by a write guard"),
    )
)]
#[post("/business_rules/rules")]
pub async fn create_rule(
    ctx: AuthContext,
    services: web::Data<Services>,
    body: Json<CreateRule>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let (id, webhook_secret, op) = rules::create(&services, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(CreatedRule { id, webhook_secret }))
}

/// Changes the fields sent (omitted fields keep their values). A change
/// that gives a rule without a webhook secret its first `CALL_WEBHOOK`
/// action answers the new secret this once (`webhookSecret`).
#[utoipa::path(
    tag = "Business rules",
    params(("id" = Option<String>, Query, description = "Id, when not in the body")),
    request_body = UpdateRule,
    responses(
        (status = 200, body = RuleUpdated),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[put("/business_rules/rules")]
pub async fn update_rule(
    ctx: AuthContext,
    services: web::Data<Services>,
    body: WithId<Json<UpdateRule>>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let id = uuid_or(body.id.0.as_deref(), RulesError::RuleIdRequired)?;
    let (webhook_secret, op) = rules::update(&services, &ctx, id, body.body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(RuleUpdated {
        ok: true,
        webhook_secret,
    }))
}

/// Gives the rule a new webhook secret, answered this once; the old one
/// stops signing at once (webhook calls still queued are signed with the
/// new one). Recorded in the action log without the secret, not undoable.
#[utoipa::path(
    tag = "Business rules",
    params(("id" = String, Path, description = "Rule id (uuid)")),
    responses(
        (status = 200, body = WebhookSecret),
        (status = 400, body = ErrorBody, description = "`Invalid rule id`"),
        (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "Refused by a write guard"),
    )
)]
#[post("/business_rules/rules/{id}/webhook-secret")]
pub async fn rotate_webhook_secret(
    ctx: AuthContext,
    db: web::Data<Db>,
    keys: web::Data<KeyRing>,
    id: Path<String>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let id = uuid_or(Some(id.as_str()), RulesError::InvalidRuleId)?;
    let (webhook_secret, op) = rules::rotate_secret(&db, &ctx, &keys, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(WebhookSecret { webhook_secret }))
}

/// Deletes a rule (softly: its execution logs keep pointing at it).
#[utoipa::path(
    tag = "Business rules",
    params(IdQuery),
    responses(
        (status = 200, body = Done),
        (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody),
    )
)]
#[delete("/business_rules/rules")]
pub async fn delete_rule(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<IdQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let id = uuid_or(q.id.as_deref(), RulesError::RuleIdRequired)?;
    let op = rules::delete(&db, &ctx, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Done { ok: true }))
}

/// One rule with its condition and actions.
#[utoipa::path(
    tag = "Business rules",
    params(("id" = String, Path, description = "Rule id (uuid)")),
    responses(
        (status = 200, body = RuleDetail),
        (status = 400, body = ErrorBody, description = "`Invalid rule id`"),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/business_rules/rules/{id}")]
pub async fn get_rule(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
) -> AppResult<web::Json<RuleDetail>> {
    ctx.require(VIEW)?;
    let id = uuid_or(Some(id.as_str()), RulesError::InvalidRuleId)?;
    let mut conn = db.conn().await?;
    Ok(web::Json(rules::get(&mut conn, &ctx, id).await?))
}
