use actix_web::{HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use stoa_acl::{AuthContext, Feature, ModuleInfo};
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};
use utoipa::ToSchema;
use uuid::Uuid;

use super::State;

const MAX_FEATURES: usize = 50;
const MAX_FEATURE_LEN: usize = 128;

#[derive(Debug, Deserialize, ToSchema)]
pub struct FeatureCheckRequest {
    /// At most 50 feature ids, each at most 128 characters.
    pub features: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureCheckResponse {
    /// True when every requested feature is granted.
    pub ok: bool,
    /// The requested features the caller holds.
    pub granted: Vec<String>,
    pub user_id: Option<Uuid>,
}

/// Which of the given features the caller holds (wildcards and super admin apply).
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = FeatureCheckRequest,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = FeatureCheckResponse),
        (status = 400, body = ErrorBody, description = "`{ok:false,error}`: missing, too many or invalid entries"),
        (status = 401, body = ErrorBody),
    )
)]
#[post("/auth/feature-check")]
pub async fn feature_check(ctx: AuthContext, body: web::Bytes) -> AppResult<HttpResponse> {
    let invalid = || AppError::bad_request("Invalid request").ok_false();
    stoa_core::extract::check_json_body(&body).map_err(AppError::ok_false)?;
    let req: FeatureCheckRequest = serde_json::from_slice(&body).map_err(|_| invalid())?;
    if req.features.len() > MAX_FEATURES
        || req
            .features
            .iter()
            .any(|f| f.trim().is_empty() || f.len() > MAX_FEATURE_LEN)
    {
        return Err(invalid());
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

#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureCatalog {
    pub items: Vec<Feature>,
    pub modules: Vec<ModuleInfo>,
}

/// Every feature the enabled modules check (needs `auth.acl.manage`).
#[utoipa::path(
    tag = "Authentication & Accounts",
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = FeatureCatalog),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[get("/auth/features")]
pub async fn features(ctx: AuthContext, state: State) -> AppResult<web::Json<FeatureCatalog>> {
    ctx.require("auth.acl.manage")?;
    let mut items: Vec<Feature> = state.registry.features().cloned().collect();
    items.sort_by(|a, b| (a.module, a.id).cmp(&(b.module, b.id)));
    Ok(web::Json(FeatureCatalog {
        items,
        modules: state.registry.modules().cloned().collect(),
    }))
}
