//! `GET /customers/pipelines`.

use actix_web::{HttpRequest, HttpResponse, get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::{AppResult, Query};

use crate::PIPELINES_VIEW;
use crate::dto::{PipelineList, PipelineListQuery};
use crate::service::pipelines;

/// Every pipeline of the caller's tenant in the organizations it sees.
#[utoipa::path(
    tag = "Customers",
    params(PipelineListQuery),
    responses(
        (status = 200, body = PipelineList),
    )
)]
#[get("/customers/pipelines")]
pub async fn list_pipelines(
    http: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<PipelineListQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(PIPELINES_VIEW)?;
    let kept = {
        let mut conn = db.conn().await?;
        pipelines::list(&mut conn, &ctx, q.is_default).await?
    };
    // Kept: the same list again is the session check alone while no
    // pipeline or stage of the tenant (and no ACL) changed.
    kept.answer(&http, &ctx)
}
