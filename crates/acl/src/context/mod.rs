//! Who is calling, in which tenant and organization, with which grants.
//!
//! [`AuthContext`] is an actix extractor. It gathers the credentials of the
//! request ([`Credentials`]) and hands them to the [`Authenticator`] registered
//! as app data (stoa-auth provides it), so this crate knows nothing of sessions,
//! tokens or tables. A handler then asks `ctx.require("devices.manage")?`.

use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpMessage, HttpRequest, web};
use futures_util::future::{BoxFuture, LocalBoxFuture};
use stoa_core::AppError;
use stoa_core::command::WriteGuards;
use stoa_core::http::headers;
use stoa_core::http::read_cache::ReadOwner;
use uuid::Uuid;

use crate::matching::feature_granted;

/// Cookie holding the access token (JWT), as the reference names it.
pub const AUTH_COOKIE: &str = "auth_token";
/// Cookie holding the session (refresh) token.
pub const SESSION_COOKIE: &str = "session_token";
/// Cookie selecting the organization the caller works in (`__all__` = all).
pub const SELECTED_ORG_COOKIE: &str = "om_selected_org";
/// Cookie selecting the tenant a super admin works in.
pub const SELECTED_TENANT_COOKIE: &str = "om_selected_tenant";
/// Header equivalents of the selection cookies, for API clients.
pub const SELECTED_ORG_HEADER: &str = stoa_core::http::headers::SELECTED_ORG;
pub const SELECTED_TENANT_HEADER: &str = stoa_core::http::headers::SELECTED_TENANT;
/// The API-key shape, defined in stoa-core so the origin guard and the
/// authenticator agree on which credential a request carries.
pub use stoa_core::http::headers::{API_KEY_PREFIX, looks_like_api_key};

/// The value that selects every organization the caller may see.
pub const ALL_ORGANIZATIONS: &str = "__all__";

/// The caller's resolved grants in one (tenant, organization) scope. Shared
/// (and cached) between requests of the same user and scope.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolvedAcl {
    pub is_super_admin: bool,
    /// Granted features, possibly with wildcards (`auth.*`, `*`).
    pub features: Vec<String>,
    /// Names of the caller's roles in the tenant.
    pub roles: Vec<String>,
    /// Organizations the caller may act in (with descendants); `None` = all of the tenant.
    pub allowed_organization_ids: Option<Vec<Uuid>>,
    /// The organization writes go to (the selected one, else the home one).
    pub selected_organization_id: Option<Uuid>,
    /// Organizations reads are filtered to (the selected subtree, else the
    /// allowed set); `None` = the whole tenant.
    pub visible_organization_ids: Option<Vec<Uuid>>,
}

/// How the caller authenticated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CredentialKind {
    Session,
    ApiKey,
    /// An API key a business rule acts as (`CALL_OPEN_MERCATO`, in
    /// process): authorized exactly as the key, its writes recorded with
    /// source [`BUSINESS_RULE_SOURCE`] so they never trigger rules again.
    BusinessRule,
}

/// The action-log source of writes made by a business rule as an API key.
pub const BUSINESS_RULE_SOURCE: &str = "business_rule";

/// The authenticated caller of a request.
#[derive(Clone, Debug)]
pub struct AuthContext {
    /// The user (`None` for an API key that acts on its own).
    pub user_id: Option<Uuid>,
    /// The login session behind the token (`None` for API keys).
    pub session_id: Option<Uuid>,
    /// The API key used (`None` for sessions).
    pub api_key_id: Option<Uuid>,
    pub kind: CredentialKind,
    pub email: Option<String>,
    /// The user's display name, when set.
    pub name: Option<String>,
    /// The tenant the request acts in (a super admin's selected tenant, else the user's).
    pub tenant_id: Option<Uuid>,
    /// The caller's own tenant, whatever is selected.
    pub actor_tenant_id: Option<Uuid>,
    /// The user's home organization.
    pub home_organization_id: Option<Uuid>,
    pub acl: Arc<ResolvedAcl>,
    /// The `acl_version` `acl` was resolved under (session callers), which
    /// tags list answers kept for the caller ([`AuthContext::read_owner`]).
    pub acl_version: Option<i64>,
    /// The write guards of the registry (`Registry::write_guards`), handed to
    /// the command bus with [`AuthContext::actor`]. Authenticators fill them in.
    pub guards: WriteGuards,
}

impl AuthContext {
    pub fn is_super_admin(&self) -> bool {
        self.acl.is_super_admin
    }

    /// Whether the caller holds `feature` in the current scope.
    pub fn has(&self, feature: &str) -> bool {
        if let (Some(allowed), Some(selected)) = (
            &self.acl.allowed_organization_ids,
            self.acl.selected_organization_id,
        ) && !self.acl.is_super_admin
            && !allowed.contains(&selected)
        {
            return false;
        }
        feature_granted(&self.acl.features, feature, self.acl.is_super_admin)
    }

    /// `Ok` when every feature is held, else 403 `{error:"Forbidden", requiredFeatures}`.
    pub fn require_all(&self, features: &[&str]) -> Result<(), AppError> {
        if features.iter().all(|f| self.has(f)) {
            Ok(())
        } else {
            Err(AppError::forbidden().with_field("requiredFeatures", features))
        }
    }

    pub fn require(&self, feature: &str) -> Result<(), AppError> {
        self.require_all(&[feature])
    }

    /// The tenant the request acts in, or 403 when the caller has none.
    pub fn tenant(&self) -> Result<Uuid, AppError> {
        self.tenant_id.ok_or_else(|| {
            AppError::new(
                actix_web::http::StatusCode::FORBIDDEN,
                "Tenant scope required",
            )
        })
    }

    /// The organization writes go to.
    pub fn organization_id(&self) -> Option<Uuid> {
        self.acl.selected_organization_id
    }

    /// Whether `org` is inside what the caller may see (`None` = unrestricted).
    pub fn can_see_organization(&self, org: Uuid) -> bool {
        match &self.acl.visible_organization_ids {
            None => true,
            Some(ids) => ids.contains(&org),
        }
    }

    /// Who acts, as the action and access logs record it: the user, or for an
    /// API key the key's id (the reference records it as `actor_user_id`).
    pub fn actor_id(&self) -> Option<Uuid> {
        self.user_id.or(self.api_key_id)
    }

    /// Who a list answer may be kept for ([`stoa_core::http::read_cache`]):
    /// a session caller whose ACL version is known; `None` for API keys,
    /// whose answers are never kept.
    pub fn read_owner(&self) -> Option<ReadOwner> {
        match (self.kind, self.user_id, self.acl_version) {
            (CredentialKind::Session, Some(user_id), Some(acl_version)) => Some(ReadOwner {
                user_id,
                tenant_id: self.actor_tenant_id,
                home_organization_id: self.home_organization_id,
                acl_version,
            }),
            _ => None,
        }
    }

    /// The row-level security scope of the caller's request
    /// ([`stoa_core::rls`]): a super admin works across tenants (audited as
    /// a bypass), anyone else in the tenant the request acts in, and a
    /// caller without a tenant sees no tenant rows.
    pub fn rls_scope(&self) -> stoa_core::rls::Scope {
        use stoa_core::rls::Scope;
        if self.is_super_admin() {
            Scope::Bypass("super admin")
        } else {
            match self.tenant_id {
                Some(tenant) => Scope::Tenant(tenant),
                None => Scope::Closed,
            }
        }
    }

    /// Whether `tenant` may be targeted: the caller's scope tenant, or any for a super admin.
    pub fn may_target_tenant(&self, tenant: Uuid) -> bool {
        self.is_super_admin() || self.tenant_id == Some(tenant)
    }
}

/// The credentials and scope selection found on a request.
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    /// `Authorization: Bearer <value>`.
    pub bearer: Option<String>,
    /// The `auth_token` cookie.
    pub cookie_token: Option<String>,
    /// `x-api-key: <value>`, `Authorization: ApiKey <value>`, or a bearer value
    /// in the key format ([`looks_like_api_key`]).
    pub api_key: Option<String>,
    /// `x-om-selected-org` header, else the `om_selected_org` cookie.
    pub selected_org: Option<String>,
    /// Whether `selected_org` came from the cookie (a stale cookie gets cleared).
    pub selected_org_from_cookie: bool,
    /// `x-om-selected-tenant` header, else the `om_selected_tenant` cookie.
    pub selected_tenant: Option<String>,
}

impl Credentials {
    pub fn from_request(req: &HttpRequest) -> Self {
        let header = |name: &str| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(String::from)
        };
        let cookie = |name: &str| {
            req.cookie(name)
                .map(|c| c.value().trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let authorization = header(headers::AUTHORIZATION);
        let (mut bearer, mut api_key) = (None, header(headers::API_KEY));
        if let Some(value) = authorization {
            let (scheme, rest) = value.split_once(' ').unwrap_or((value.as_str(), ""));
            let rest = rest.trim();
            if scheme.eq_ignore_ascii_case("bearer") && looks_like_api_key(rest) {
                api_key = Some(rest.to_string());
            } else if scheme.eq_ignore_ascii_case("bearer") && !rest.is_empty() {
                bearer = Some(rest.to_string());
            } else if scheme.eq_ignore_ascii_case("apikey") && !rest.is_empty() {
                api_key = api_key.or(Some(rest.to_string()));
            }
        }
        let (selected_org, selected_org_from_cookie) = match header(SELECTED_ORG_HEADER) {
            Some(v) => (Some(v), false),
            None => {
                let c = cookie(SELECTED_ORG_COOKIE);
                let from_cookie = c.is_some();
                (c, from_cookie)
            }
        };
        Self {
            bearer,
            cookie_token: cookie(AUTH_COOKIE),
            api_key,
            selected_org,
            selected_org_from_cookie,
            selected_tenant: header(SELECTED_TENANT_HEADER)
                .or_else(|| cookie(SELECTED_TENANT_COOKIE)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.bearer.is_none() && self.cookie_token.is_none() && self.api_key.is_none()
    }
}

/// Turns credentials into an [`AuthContext`]: 401 when missing or invalid, 422
/// `organization_selection_invalid` when the selected scope is not the caller's,
/// 503 when the database cannot tell.
pub trait Authenticator: Send + Sync + 'static {
    fn authenticate<'a>(
        &'a self,
        credentials: &'a Credentials,
    ) -> BoxFuture<'a, Result<AuthContext, AppError>>;
}

/// Shared handle to the registered authenticator (`web::Data<dyn Authenticator>`).
pub type AuthenticatorData = web::Data<dyn Authenticator>;

/// Wraps an authenticator as app data.
pub fn authenticator_data(auth: Arc<dyn Authenticator>) -> AuthenticatorData {
    web::Data::from(auth)
}

impl FromRequest for AuthContext {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        // Several extractors of one request share one resolution.
        if let Some(ctx) = req.extensions().get::<AuthContext>() {
            let ctx = ctx.clone();
            // Resolved before (the access matrix, another extractor): the
            // request's scope is the caller's either way.
            stoa_core::rls::set_request_scope(ctx.rls_scope());
            return Box::pin(async move { Ok(ctx) });
        }
        let credentials = Credentials::from_request(req);
        let authenticator = req.app_data::<AuthenticatorData>().cloned();
        let req = req.clone();
        Box::pin(async move {
            let Some(authenticator) = authenticator else {
                return Err(AppError::internal(
                    "no Authenticator is registered as app data",
                ));
            };
            if credentials.is_empty() {
                return Err(AppError::unauthorized());
            }
            // The session check and key lookup find the caller across
            // tenants; the rest of the request sees the caller's tenant only.
            let ctx =
                stoa_core::rls::bypass("authenticate", authenticator.authenticate(&credentials))
                    .await?;
            stoa_core::rls::set_request_scope(ctx.rls_scope());
            req.extensions_mut().insert(ctx.clone());
            Ok(ctx)
        })
    }
}

#[cfg(test)]
mod tests;
