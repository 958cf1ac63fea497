//! `GET /onboarding/onboarding/status?tenantId=`: a verified workspace's preparation.

use actix_web::{HttpRequest, get, web};
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Query};
use uuid::Uuid;

use crate::dto::{StatusQuery, StatusResponse};
use crate::error::OnboardingError;
use crate::routes::{LOGIN_TENANT_COOKIE, State, gate};
use crate::service;

/// Whether the workspace is ready and how far its demo data is. Only for
/// the browser (or client) that verified it: the `om_login_tenant` cookie
/// the verification set must name the tenant.
#[utoipa::path(
    tag = "Onboarding",
    params(StatusQuery),
    responses(
        (status = 200, body = StatusResponse),
        (status = 400, body = ErrorBody, description = "`{ok:false, error:\"Invalid tenant id.\"}`"),
        (status = 403, body = ErrorBody, description = "`{ok:false, error:\"Not authorized for this tenant.\"}`: the `om_login_tenant` cookie is missing or names another tenant"),
        (status = 404, body = ErrorBody, description = "Onboarding disabled, or no verified sign-up created this tenant"),
    )
)]
#[get("/onboarding/onboarding/status")]
pub async fn status(
    req: HttpRequest,
    state: State,
    q: Query<StatusQuery>,
) -> AppResult<web::Json<StatusResponse>> {
    // No caller yet: the lookup spans tenants (an audited bypass, `stoa_core::rls`).
    stoa_core::rls::set_request_scope(stoa_core::rls::bypass_scope("onboarding"));
    gate(&state)?;
    let tenant: Uuid = q
        .tenant_id
        .as_deref()
        .or(q.tenant.as_deref())
        .map(str::trim)
        .and_then(|t| t.parse().ok())
        .ok_or(OnboardingError::InvalidTenantId)?;
    let allowed = req
        .cookie(LOGIN_TENANT_COOKIE)
        .is_some_and(|c| c.value().trim().parse::<Uuid>().ok() == Some(tenant));
    if !allowed {
        return Err(OnboardingError::NotAuthorizedForTenant.into());
    }
    let mut conn = state.db.conn().await?;
    Ok(web::Json(service::status(&mut conn, &state, tenant).await?))
}
