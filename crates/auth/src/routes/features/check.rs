//! `POST /auth/feature-check`: which of the given features the caller holds.

use actix_web::{HttpResponse, post, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;

use crate::dto::{FeatureCheckRequest, FeatureCheckResponse};
use crate::error::AuthError;

const MAX_FEATURES: usize = 50;
const MAX_FEATURE_LEN: usize = 128;

/// Which of the given features the caller holds (wildcards and super admin apply).
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = FeatureCheckRequest,
    responses(
        (status = 200, body = FeatureCheckResponse),
        (status = 400, body = ErrorBody, description = "`{ok:false,error}`: missing, too many or invalid entries"),
    )
)]
#[post("/auth/feature-check")]
pub async fn feature_check(ctx: AuthContext, body: web::Bytes) -> AppResult<HttpResponse> {
    stoa_core::extract::check_json_body(&body).map_err(|e| e.ok_false())?;
    let req: FeatureCheckRequest =
        serde_json::from_slice(&body).map_err(|_| AuthError::InvalidRequest)?;
    if req.features.len() > MAX_FEATURES
        || req
            .features
            .iter()
            .any(|f| f.trim().is_empty() || f.len() > MAX_FEATURE_LEN)
    {
        return Err(AuthError::InvalidRequest.into());
    }
    let granted: Vec<String> = req
        .features
        .iter()
        .filter(|f| ctx.has(f))
        .cloned()
        .collect();
    Ok(HttpResponse::Ok().json(FeatureCheckResponse {
        ok: granted.len() == req.features.len(),
        granted,
        user_id: ctx.user_id,
    }))
}
