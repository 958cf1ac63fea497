//! Failures of the auth endpoints, with the reference's messages, and the one
//! place that maps them to the API's JSON errors.
//!
//! Most variants render `{"error": message}` (plus `code`) through
//! [`ApiError`]. The session endpoints answer `{"ok": false, "error"}`, and a
//! few errors carry extra fields (`issues`, `fieldErrors`, `tenantIds`) or
//! headers (cookies to clear): [`From<AuthError> for AppError`] adds those, so
//! no handler builds an error body itself.
//!
//! Not here: internal failures of infrastructure (signing a token, `stoa
//! init`, the hashing pool), which stay `AppError::internal` and never reach a
//! client as a message, and the seeding commands' errors (`seed.rs`), which
//! are command-line messages, not API errors.

use std::borrow::Cow;

use actix_web::http::{StatusCode, header};
use stoa_acl::{AUTH_COOKIE, SELECTED_ORG_COOKIE, SESSION_COOKIE};
use stoa_core::error::Issue;
use stoa_core::{ApiError, AppError};
use uuid::Uuid;

/// The code of a refused organization selection, as the reference names it.
pub const SELECTION_INVALID: &str = "organization_selection_invalid";

#[derive(Clone, Debug, thiserror::Error)]
pub enum AuthError {
    // --- 404 -------------------------------------------------------------
    #[error("User not found")]
    UserNotFound,
    #[error("Role not found")]
    RoleNotFound,
    /// Another tenant's organization (the unknown organization's message, so
    /// nothing about it leaks).
    #[error("Organization not found")]
    ForeignOrganization,

    // --- 403 -------------------------------------------------------------
    #[error("Organization out of scope")]
    OrganizationOutOfScope,
    #[error("Only super administrators can manage super administrator accounts.")]
    SuperAdminAccount,
    #[error("Only super administrators can manage super administrator roles.")]
    SuperAdminRole,
    #[error("User is outside your organizations")]
    UserOutsideOrganizations,
    /// `{ok:false}`: the user lacks the role the login asked for.
    #[error("Not authorized for this area")]
    NotAuthorizedForArea,
    /// `{ok:false}`: a sign-in posted from another site's page (login CSRF:
    /// it would sign the victim's browser into the attacker's account).
    #[error("Cross-site sign-in refused: this origin may not sign in")]
    CrossSiteLogin,

    // --- 401 -------------------------------------------------------------
    #[error("Unauthorized")]
    Unauthorized,
    /// A session token from a cookie that no longer works: both auth
    /// cookies are cleared.
    #[error("Unauthorized")]
    StaleSessionCookie,
    /// `{ok:false}`: no account opens with this password.
    #[error("Invalid email or password")]
    InvalidCredentials,
    /// `{ok:false}`, and both session cookies are cleared.
    #[error("Invalid or expired refresh token")]
    InvalidRefreshToken,

    // --- 400, `{ok:false, error}` (session endpoints) --------------------
    #[error("Invalid email or password")]
    InvalidLoginForm,
    #[error("Invalid email")]
    InvalidEmail,
    #[error("Invalid request")]
    InvalidRequest,
    #[error("Missing or invalid refresh token")]
    MissingRefreshToken,
    #[error("Invalid or expired token")]
    InvalidResetToken,
    /// A new password the policy refuses: the reference's words for any bad
    /// reset form, with the policy's message as an issue on `password`.
    #[error("Invalid request")]
    PasswordRejected(String),

    // --- 400 -------------------------------------------------------------
    /// With `issues` and `details` naming `path`.
    #[error("{message}")]
    Invalid {
        message: Cow<'static, str>,
        path: &'static str,
        detail: String,
    },
    /// With `fieldErrors: {email: "Email already in use"}`.
    #[error("Email already in use")]
    EmailInUse,
    /// With `fieldErrors: {id: [reason]}` (the reference's body; its status was 422).
    #[error("Validation failed")]
    InvalidInviteId(&'static str),
    #[error("Invalid request origin")]
    InvalidOrigin,
    #[error("You cannot delete your own account")]
    CannotDeleteSelf,
    /// Another administrator changes one's roles, organization or ACL: a
    /// caller who removed their own access could not undo it.
    #[error("You cannot change your own roles, organization or access")]
    CannotChangeOwnAccess,
    #[error("Invalid query parameters: id: a uuid is required")]
    IdRequired,
    #[error("Invalid query parameters: roleIds: must be uuids")]
    InvalidRoleIds,
    #[error("Invalid query parameters: roleIds: at most {max} ids")]
    TooManyRoleIds { max: usize },
    #[error("Invalid input: features: at most {max} entries")]
    TooManyFeatures { max: usize },
    #[error("Invalid input: features: entries are at most {max} characters")]
    FeatureTooLong { max: usize },
    #[error("Invalid input: organizations: at most {max} entries")]
    TooManyOrganizations { max: usize },
    #[error("Invalid input: organizations: {0} is not an organization of this tenant")]
    ForeignAclOrganization(Uuid),
    #[error("An organization-scoped access override needs at least one feature")]
    AclFeaturesRequired,
    #[error("Invalid input: name: must be 2 to 100 characters")]
    RoleNameLength,
    #[error("Role name is reserved")]
    RoleNameReserved,
    #[error("Invalid input: tenantId: global roles are not supported")]
    GlobalRole,
    #[error("Invalid input: tenantId: tenant not found")]
    TenantNotFound,
    #[error("Role has assigned users")]
    RoleHasUsers,
    #[error("Invalid locale")]
    InvalidLocale,
    #[error("Bad request")]
    MalformedBody,

    // --- 409 -------------------------------------------------------------
    #[error("A role with this name already exists")]
    RoleNameTaken,
    #[error("User already has a password")]
    HasPassword,
    /// `{ok:false}` with `tenantIds`: the password opens accounts in several tenants.
    #[error("This e-mail address belongs to accounts in several tenants; choose a tenant.")]
    TenantRequired { tenant_ids: Vec<Option<Uuid>> },

    // --- 422 -------------------------------------------------------------
    /// An unknown, foreign or disallowed organization (or tenant) selection;
    /// `from_cookie` clears the stale `om_selected_org` cookie.
    #[error("{message}")]
    SelectionInvalid {
        message: &'static str,
        from_cookie: bool,
    },

    // --- 500 with a message (configuration the operator must fix) --------
    #[error("Password reset email origin is not configured")]
    ResetOriginMissing,
    #[error("Invitation email origin is not configured")]
    InviteOriginMissing,
}

impl ApiError for AuthError {
    fn status(&self) -> StatusCode {
        match self {
            Self::InvalidInviteId(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::UserNotFound | Self::RoleNotFound | Self::ForeignOrganization => {
                StatusCode::NOT_FOUND
            }
            Self::OrganizationOutOfScope
            | Self::SuperAdminAccount
            | Self::SuperAdminRole
            | Self::UserOutsideOrganizations
            | Self::NotAuthorizedForArea
            | Self::CrossSiteLogin => StatusCode::FORBIDDEN,
            Self::Unauthorized
            | Self::StaleSessionCookie
            | Self::InvalidCredentials
            | Self::InvalidRefreshToken => StatusCode::UNAUTHORIZED,
            Self::RoleNameTaken | Self::HasPassword | Self::TenantRequired { .. } => {
                StatusCode::CONFLICT
            }
            Self::SelectionInvalid { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::ResetOriginMissing | Self::InviteOriginMissing => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
            Self::InvalidLoginForm
            | Self::InvalidEmail
            | Self::InvalidRequest
            | Self::MissingRefreshToken
            | Self::InvalidResetToken
            | Self::PasswordRejected(_)
            | Self::Invalid { .. }
            | Self::EmailInUse
            | Self::InvalidOrigin
            | Self::CannotDeleteSelf
            | Self::CannotChangeOwnAccess
            | Self::IdRequired
            | Self::InvalidRoleIds
            | Self::TooManyRoleIds { .. }
            | Self::TooManyFeatures { .. }
            | Self::FeatureTooLong { .. }
            | Self::TooManyOrganizations { .. }
            | Self::ForeignAclOrganization(_)
            | Self::AclFeaturesRequired
            | Self::RoleNameLength
            | Self::RoleNameReserved
            | Self::GlobalRole
            | Self::TenantNotFound
            | Self::RoleHasUsers
            | Self::InvalidLocale
            | Self::MalformedBody => StatusCode::BAD_REQUEST,
        }
    }

    fn code(&self) -> Option<&'static str> {
        match self {
            Self::AclFeaturesRequired => Some("acl_features_required"),
            Self::RoleNameTaken => Some("role_name_taken"),
            Self::CrossSiteLogin => Some("cross_site_login"),
            Self::TenantRequired { .. } => Some("tenant_required"),
            Self::SelectionInvalid { .. } => Some(SELECTION_INVALID),
            _ => None,
        }
    }
}

impl AuthError {
    /// Whether the body is the session endpoints' `{ok:false, error}`.
    fn ok_false(&self) -> bool {
        matches!(
            self,
            Self::NotAuthorizedForArea
                | Self::CrossSiteLogin
                | Self::InvalidCredentials
                | Self::InvalidRefreshToken
                | Self::InvalidLoginForm
                | Self::InvalidEmail
                | Self::InvalidRequest
                | Self::MissingRefreshToken
                | Self::InvalidResetToken
                | Self::PasswordRejected(_)
                | Self::TenantRequired { .. }
        )
    }
}

/// The `Set-Cookie` value that deletes `name`: the removal cookie the
/// handlers send (`routes::clear_cookie`), so both clear it the same way.
fn cleared(name: &'static str) -> String {
    crate::routes::clear_cookie(name).to_string()
}

impl From<AuthError> for AppError {
    fn from(err: AuthError) -> Self {
        let ok_false = err.ok_false();
        let mut out = match &err {
            // A configuration message the operator needs: shown, not logged
            // as an internal failure (`from_api` would hide it).
            AuthError::ResetOriginMissing | AuthError::InviteOriginMissing => {
                AppError::new(err.status(), err.to_string())
            }
            _ => AppError::from_api(err.clone()),
        };
        out = match err {
            AuthError::Invalid { path, detail, .. } => out.with_issues(vec![Issue {
                path: vec![path.into()],
                message: detail,
                code: "invalid".into(),
            }]),
            // Not `with_issues`: the route's shape (E) would fold the issue
            // into `error`, which the reference words exactly.
            AuthError::PasswordRejected(detail) => out.with_field(
                "issues",
                [Issue {
                    path: vec!["password".into()],
                    message: detail,
                    code: "invalid_string".into(),
                }],
            ),
            AuthError::EmailInUse => out.with_field(
                "fieldErrors",
                serde_json::json!({"email": "Email already in use"}),
            ),
            // The reference's 422 `{error:"Validation failed", fieldErrors}`
            // (shape D, declared by the route; the spec lists 422).
            AuthError::InvalidInviteId(reason) => out.with_issues(vec![Issue {
                path: vec!["id".into()],
                message: reason.to_string(),
                code: "invalid_string".into(),
            }]),
            AuthError::TenantRequired { tenant_ids } => out.with_field("tenantIds", tenant_ids),
            AuthError::InvalidRefreshToken => out
                .with_header(header::SET_COOKIE, cleared(AUTH_COOKIE))
                .with_header(header::SET_COOKIE, cleared(SESSION_COOKIE)),
            AuthError::StaleSessionCookie => out
                .with_header(
                    header::SET_COOKIE,
                    format!("{AUTH_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"),
                )
                .with_header(
                    header::SET_COOKIE,
                    format!("{SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"),
                ),
            AuthError::SelectionInvalid {
                from_cookie: true, ..
            } => out.with_header(
                header::SET_COOKIE,
                format!("{SELECTED_ORG_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax"),
            ),
            _ => out,
        };
        if ok_false { out.ok_false() } else { out }
    }
}

impl AuthError {
    /// A 400 with `issues` naming `path` (`detail` is the issue's message).
    pub fn invalid(
        message: impl Into<Cow<'static, str>>,
        path: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        Self::Invalid {
            message: message.into(),
            path,
            detail: detail.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(err: AuthError) -> (u16, serde_json::Value) {
        let app: AppError = err.into();
        (app.status().as_u16(), app.body())
    }

    #[test]
    fn plain_variants_render_status_and_message() {
        let cases = [
            (AuthError::UserNotFound, 404, "User not found"),
            (
                AuthError::ForeignOrganization,
                404,
                "Organization not found",
            ),
            (
                AuthError::SuperAdminRole,
                403,
                "Only super administrators can manage super administrator roles.",
            ),
            (
                AuthError::TooManyRoleIds { max: 50 },
                400,
                "Invalid query parameters: roleIds: at most 50 ids",
            ),
            (AuthError::HasPassword, 409, "User already has a password"),
            (AuthError::Unauthorized, 401, "Unauthorized"),
        ];
        for (err, status, message) in cases {
            let (s, body) = render(err);
            assert_eq!(s, status, "{message}");
            assert_eq!(body, serde_json::json!({"error": message}));
        }
    }

    #[test]
    fn special_bodies_keep_their_fields() {
        let (s, body) = render(AuthError::TenantRequired {
            tenant_ids: vec![None],
        });
        assert_eq!(s, 409);
        assert_eq!(body["ok"], false);
        assert_eq!(body["code"], "tenant_required");
        assert_eq!(body["tenantIds"], serde_json::json!([null]));

        let (s, body) = render(AuthError::InvalidInviteId("Required"));
        assert_eq!(s, 422);
        assert_eq!(body["issues"][0]["path"], serde_json::json!(["id"]));

        let (s, body) = render(AuthError::ResetOriginMissing);
        assert_eq!(s, 500);
        assert_eq!(
            body["error"],
            "Password reset email origin is not configured"
        );

        let (_, body) = render(AuthError::invalid("Invalid input", "email", "Bad"));
        assert_eq!(body["issues"][0]["path"], serde_json::json!(["email"]));
        assert!(body.get("details").unwrap().is_object());

        let (s, body) = render(AuthError::AclFeaturesRequired);
        assert_eq!(s, 400);
        assert_eq!(body["code"], "acl_features_required");
    }
}
