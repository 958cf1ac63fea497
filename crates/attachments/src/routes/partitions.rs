//! `/attachments/partitions`: list, create, update, delete (`?id=`).

use actix_web::{HttpRequest, HttpResponse, delete, get, post, put, web};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Query};

use crate::config::AttachmentsConfig;
use crate::dto::{IdQuery, Ok, PartitionAnswer, PartitionBody, PartitionList};
use crate::error::AttachmentsError;
use crate::{MANAGE, partitions};

use super::parse_id;

/// Every partition the caller may use: the global ones and its tenant's.
#[utoipa::path(
    tag = "Attachments",
    responses(
        (status = 200, body = PartitionList),
    )
)]
#[get("/attachments/partitions")]
pub async fn list_partitions(
    http: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let kept = {
        let mut conn = db.conn().await?;
        partitions::visible(&mut conn, &ctx).await?
    };
    // Kept: the same list again is the session check alone while no
    // partition (or attachment) of the tenant and no ACL changed.
    kept.map(|rows| PartitionList {
        items: rows.iter().map(|p| p.item()).collect(),
    })
    .answer(&http, &ctx)
}

/// The body, read after the lock check as the reference does.
fn body(bytes: &[u8]) -> Result<(PartitionBody, Value), stoa_core::AppError> {
    stoa_core::extract::check_json_body(bytes)?;
    // A body that is not JSON at all: the reference's words.
    let raw: Value = serde_json::from_slice(bytes).map_err(|_| AttachmentsError::InvalidPayload)?;
    let parsed: PartitionBody = stoa_core::extract::parse_json(bytes)?;
    Ok((parsed, raw))
}

/// Creates a partition of the caller's tenant; codes are unique across tenants.
#[utoipa::path(
    tag = "Attachments",
    request_body = PartitionBody,
    responses(
        (status = 201, body = PartitionAnswer),
        (status = 400, body = ErrorBody, description = "Invalid payload or code"),
        (status = 403, body = ErrorBody, description = "Missing feature, or partitions locked by DEMO_MODE / self-service onboarding"),
        (status = 409, body = ErrorBody, description = "Partition code already exists"),
    )
)]
#[post("/attachments/partitions")]
pub async fn create_partition(
    ctx: AuthContext,
    db: web::Data<Db>,
    config: web::Data<AttachmentsConfig>,
    bytes: web::Bytes,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    partitions::check_unlocked(&config)?;
    let (parsed, _) = body(&bytes)?;
    let (created, op) = partitions::create(&db, &ctx, &config, parsed).await?;
    Ok(
        with_operation(HttpResponse::Created(), &op).json(PartitionAnswer {
            item: created.item(),
        }),
    )
}

/// Updates a partition of the caller's tenant (global ones: super admins
/// only); the code cannot change.
#[utoipa::path(
    tag = "Attachments",
    request_body = PartitionBody,
    responses(
        (status = 200, body = PartitionAnswer),
        (status = 400, body = ErrorBody, description = "Invalid payload, missing id, or a changed code"),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/attachments/partitions")]
pub async fn update_partition(
    ctx: AuthContext,
    db: web::Data<Db>,
    config: web::Data<AttachmentsConfig>,
    bytes: web::Bytes,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    partitions::check_unlocked(&config)?;
    let (parsed, raw) = body(&bytes)?;
    let (updated, op) = partitions::update(&db, &ctx, &config, parsed, &raw).await?;
    Ok(
        with_operation(HttpResponse::Ok(), &op).json(PartitionAnswer {
            item: updated.item(),
        }),
    )
}

/// Deletes an unused partition of the caller's tenant; the defaults stay.
#[utoipa::path(
    tag = "Attachments",
    params(IdQuery),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody, description = "Invalid id or a default partition"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Partition in use"),
    )
)]
#[delete("/attachments/partitions")]
pub async fn delete_partition(
    ctx: AuthContext,
    db: web::Data<Db>,
    config: web::Data<AttachmentsConfig>,
    q: Query<IdQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    partitions::check_unlocked(&config)?;
    let id = parse_id(q.id.as_deref(), AttachmentsError::PartitionIdRequired)?;
    let op = partitions::delete(&db, &ctx, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok::yes()))
}
