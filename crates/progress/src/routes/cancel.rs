//! `DELETE /progress/jobs/{id}`, and the cancellation it shares with
//! `cancel_by_query.rs`.

use actix_web::{delete, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};

use super::find;
use crate::dto::{CancelResponse, JobPath};
use crate::error::ProgressError;
use crate::service::{self, Cancel};

/// Cancels a cancellable job (pending: at once; running: at its next check).
#[utoipa::path(
    tag = "Progress",
    params(JobPath),
    responses((status = 200, body = CancelResponse), (status = 403, body = ErrorBody))
)]
#[delete("/progress/jobs/{id}")]
pub async fn cancel(
    ctx: AuthContext,
    db: web::Data<Db>,
    path: Path<JobPath>,
) -> AppResult<web::Json<CancelResponse>> {
    cancel_job(&ctx, &db, &path.id).await
}

/// Both forms of the cancellation (`/progress/jobs/{id}` and the collection
/// form in [`super::cancel_by_query`]).
pub(crate) async fn cancel_job(
    ctx: &AuthContext,
    db: &Db,
    id: &str,
) -> AppResult<web::Json<CancelResponse>> {
    ctx.require("progress.cancel")?;
    let mut conn = db.conn().await?;
    let job = find(&mut conn, ctx, id)
        .await
        .map_err(|_| ProgressError::CannotCancel)?;
    match service::cancel(&mut conn, &job, ctx.user_id).await? {
        Cancel::NotCancellable => Err(ProgressError::CannotCancel.into()),
        _ => Ok(web::Json(CancelResponse { ok: true })),
    }
}
