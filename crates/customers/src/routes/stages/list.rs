//! `GET /customers/pipeline-stages`.

use actix_web::{HttpRequest, HttpResponse, get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::{AppResult, Query};

use crate::PIPELINES_VIEW;
use crate::dto::{StageList, StageListQuery};
use crate::service::stages;

/// Every pipeline stage of the caller's tenant in the organizations it sees.
#[utoipa::path(
    tag = "Customers",
    params(StageListQuery),
    responses(
        (status = 200, body = StageList),
    )
)]
#[get("/customers/pipeline-stages")]
pub async fn list_stages(
    http: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<StageListQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(PIPELINES_VIEW)?;
    let kept = {
        let mut conn = db.conn().await?;
        stages::list(&mut conn, &ctx, q.pipeline_id).await?
    };
    // Kept: the same list again is the session check alone while no
    // pipeline or stage of the tenant (and no ACL) changed.
    kept.answer(&http, &ctx)
}
