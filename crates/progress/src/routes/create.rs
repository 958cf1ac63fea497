//! `POST /progress/jobs`.

use actix_web::{HttpResponse, post, web};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::scope;
use crate::dto::{CreateJob, Created};
use crate::error::ProgressError;
use crate::queries;
use crate::service::{self, NewJob};

/// Creates a progress record (for work a client tracks itself).
#[utoipa::path(
    tag = "Progress",
    request_body = CreateJob,
    responses((status = 201, body = Created), (status = 403, body = ErrorBody))
)]
#[post("/progress/jobs")]
pub async fn create(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<CreateJob>,
) -> AppResult<HttpResponse> {
    ctx.require("progress.create")?;
    let (tenant, org) = scope(&ctx)?;
    let body = body.into_inner();
    // Under `__all__` a restricted caller's job belongs to its home
    // organization (when inside its organizations), never to the tenant level
    // by accident of the selection.
    let organization = org.selected.or_else(|| {
        let allowed = org.allowed.as_ref()?;
        ctx.home_organization_id.filter(|h| allowed.contains(h))
    });
    let mut conn = db.conn().await?;
    if let Some(parent) = body.parent_job_id
        && !queries::exists(&mut conn, tenant, &org, parent).await?
    {
        return Err(ProgressError::UnknownParent.into());
    }
    let id = service::create(
        &mut conn,
        &NewJob {
            job_type: body.job_type,
            name: body.name,
            description: body.description,
            total_count: body.total_count,
            cancellable: body.cancellable.unwrap_or(false),
            meta: body.meta.map(Value::Object),
            parent_job_id: body.parent_job_id,
            partition_index: body.partition_index,
            partition_count: body.partition_count,
            tenant_id: tenant,
            organization_id: organization,
            started_by_user_id: ctx.user_id,
        },
    )
    .await?;
    Ok(HttpResponse::Created().json(Created { id }))
}
