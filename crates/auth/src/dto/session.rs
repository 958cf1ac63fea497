//! Sign-in, refresh and autologin bodies and queries.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// The login form (`application/x-www-form-urlencoded`).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginForm {
    pub email: Option<String>,
    pub password: Option<String>,
    /// `on`, `1` or `true` keeps the session for `REMEMBER_ME_DAYS` and returns a refresh token.
    pub remember: Option<String>,
    pub tenant_id: Option<String>,
    /// Alias of `tenantId`.
    pub tenant: Option<String>,
    /// Comma-separated role names; the user must hold at least one.
    pub require_role: Option<String>,
    /// Alias of `requireRole`.
    pub role: Option<String>,
    /// Where the client wants to go next (a local path).
    pub redirect: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginResponse {
    pub ok: bool,
    /// The access token (also set as the `auth_token` cookie).
    pub token: String,
    pub redirect: Option<String>,
    /// The refresh token, only with `remember`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
}

#[derive(Debug, Deserialize, validator::Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RedirectQuery {
    /// A local path (default `/backend`).
    pub redirect: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshRequest {
    pub refresh_token: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshResponse {
    pub ok: bool,
    pub access_token: String,
    /// Seconds until the access token expires.
    pub expires_in: u64,
    /// The next refresh token: each one works once (rotation).
    pub refresh_token: String,
}

#[derive(Debug, Deserialize, validator::Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RefreshRedirectQuery {
    /// Where to go afterwards: a local path or a URL on the app's origin.
    pub redirect: Option<String>,
}
