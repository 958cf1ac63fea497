//! `GET /auth/admin/nav`: the admin navigation for the caller.

use actix_web::{HttpRequest, HttpResponse, get, web};
use stoa_acl::{ALL_ORGANIZATIONS, AuthContext, AuthenticatorData, Credentials, Registry};
use stoa_core::error::ErrorBody;
use stoa_core::http::read_cache::answer_json;
use stoa_core::{AppResult, Query};
use stoa_directory::{DirectoryService, PgDirectory};
use uuid::Uuid;

use super::State;
use crate::error::PreferencesError;
use crate::nav::{NavInput, NavPayload, NavQuery, OrganizationInfo, build};
use crate::sidebar::{preference_organization, queries};
use stoa_core::i18n::request_locale;

fn present(raw: &Option<String>) -> Option<&str> {
    raw.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// Authenticates the request with the query's scope in place of the
/// selection cookies and headers.
async fn caller(
    req: &HttpRequest,
    authenticator: &AuthenticatorData,
    q: &NavQuery,
) -> AppResult<AuthContext> {
    let mut credentials = Credentials::from_request(req);
    if credentials.is_empty() {
        return Err(PreferencesError::Unauthenticated.into());
    }
    if let Some(org) = present(&q.org_id) {
        if org != ALL_ORGANIZATIONS && org.parse::<Uuid>().is_err() {
            return Err(PreferencesError::InvalidOrgId.into());
        }
        credentials.selected_org = Some(org.to_string());
        credentials.selected_org_from_cookie = false;
    }
    let tenant = match present(&q.tenant_id) {
        Some(raw) => Some(
            raw.parse::<Uuid>()
                .map_err(|_| PreferencesError::InvalidTenantId)?,
        ),
        None => None,
    };
    if let Some(tenant) = tenant {
        credentials.selected_tenant = Some(tenant.to_string());
    }
    // Across tenants, then the caller's scope (as `AuthContext` does).
    let ctx =
        stoa_core::rls::bypass("authenticate", authenticator.authenticate(&credentials)).await?;
    stoa_core::rls::set_request_scope(ctx.rls_scope());
    if let Some(tenant) = tenant
        && !ctx.is_super_admin()
        && ctx.tenant_id != Some(tenant)
    {
        return Err(stoa_acl::foreign_tenant());
    }
    Ok(ctx)
}

/// The backend pages the caller may open, grouped and ordered with the role's
/// and then the caller's sidebar preferences applied; settings and profile
/// sections; the concrete features held; the roles; the selected
/// organization and its branding.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(NavQuery),
    responses(
        (status = 200, body = NavPayload),
        (status = 403, body = ErrorBody, description = "A foreign `tenantId` from a non-super admin"),
        (status = 422, body = ErrorBody, description = "`organization_selection_invalid`"),
    )
)]
#[get("/auth/admin/nav")]
pub async fn admin_nav(
    req: HttpRequest,
    state: State,
    authenticator: AuthenticatorData,
    registry: web::Data<Registry>,
    q: Query<NavQuery>,
) -> AppResult<HttpResponse> {
    let ctx = caller(&req, &authenticator, &q).await?;
    let locale = request_locale(&req);
    let mut conn = state.db.conn().await?;
    let preferences = queries::nav_preferences(
        &mut conn,
        &*state.roles,
        ctx.user_id,
        ctx.tenant_id,
        preference_organization(&ctx),
        locale,
    )
    .await?;
    let organization =
        match (ctx.tenant_id, ctx.organization_id()) {
            (Some(tenant), Some(org)) => PgDirectory
                .organization(&mut conn, tenant, org)
                .await?
                .map(|o| OrganizationInfo {
                    id: o.id,
                    name: o.name,
                    logo_url: o.logo_url,
                    logo_preserve_aspect_ratio: o.logo_preserve_aspect_ratio,
                }),
            _ => None,
        };
    let payload = build(
        &ctx,
        NavInput {
            registry: &registry,
            role_preference: preferences.role.as_ref(),
            user_preference: preferences.own.as_ref(),
            organization,
        },
    );
    // Kept: the same request again (same user, selection, query and locale)
    // is the session check alone while no ACL (roles, assignments,
    // organizations and their branding move `acl_version`) and no sidebar
    // preference of the tenant changed.
    answer_json(
        &req,
        ctx.read_owner(),
        &payload,
        preferences.deps,
        Some(preferences.versions),
        None,
    )
}
