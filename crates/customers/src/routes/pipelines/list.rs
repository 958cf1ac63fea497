//! `GET /customers/pipelines`.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Query};

use crate::PIPELINES_VIEW;
use crate::dto::{PipelineList, PipelineListQuery};
use crate::service::pipelines;

/// Every pipeline of the caller's tenant in the organizations it sees.
#[utoipa::path(
    tag = "Customers",
    params(PipelineListQuery),
    security(("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 200, body = PipelineList),
        (status = 403, body = ErrorBody),
    )
)]
#[get("/customers/pipelines")]
pub async fn list_pipelines(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<PipelineListQuery>,
) -> AppResult<web::Json<PipelineList>> {
    ctx.require(PIPELINES_VIEW)?;
    let mut conn = db.conn().await?;
    Ok(web::Json(
        pipelines::list(&mut conn, &ctx, q.is_default).await?,
    ))
}
