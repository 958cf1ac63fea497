//! The failures of the preferences endpoints, with the reference's messages,
//! and the one place they become the API's JSON errors (some carry more than
//! a message: the missing role ids, the input issues, a typed code, or the
//! `{ok:false}` body of the consents list).

use actix_web::http::StatusCode;
use serde_json::{Value, json};
use stoa_core::error::Issue;
use stoa_core::{ApiError, AppError};
use uuid::Uuid;

#[derive(Debug, thiserror::Error)]
pub enum PreferencesError {
    #[error("Unauthorized")]
    Unauthenticated,
    /// A caller without a user (an API key acting on its own); the message
    /// names what could not be done.
    #[error("{0}")]
    NoUser(&'static str),
    #[error("Role not found")]
    RoleNotFound,
    #[error("Variant not found")]
    VariantNotFound,
    #[error("User not found")]
    UserNotFound,
    #[error("Invalid userId")]
    InvalidUserId,
    #[error("A variant with this name already exists. Choose a different name.")]
    DuplicateName,
    /// `applyToRoles`/`clearRoleIds` naming roles outside the tenant.
    #[error("Invalid roles")]
    InvalidRoles { missing: Vec<Uuid> },
    /// One invalid settings field: `path` is where, `code` the issue label.
    #[error("Invalid payload: {}: {message}", dotted(path))]
    InvalidSettings {
        path: Vec<Value>,
        message: String,
        code: &'static str,
    },
    #[error(
        "Invalid payload: send the settings either in `settings` or at the top level, not both"
    )]
    SettingsTwice,
    #[error("Invalid payload: {0}: only valid when scope.type is \"user\"")]
    RoleListWithRoleScope(&'static str),
    #[error("roleId query parameter is required")]
    RoleIdRequired,
    #[error("Invalid payload: name: must be at most {0} characters")]
    NameTooLong(usize),
    #[error("Invalid payload: name: must not be blank")]
    BlankName,
    #[error("Invalid query parameters: orgId: must be a uuid or __all__")]
    InvalidOrgId,
    #[error("Invalid query parameters: tenantId: must be a uuid")]
    InvalidTenantId,
}

/// An issue path as the message names it: `settings.groupOrder.3`.
fn dotted(path: &[Value]) -> String {
    path.iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

impl ApiError for PreferencesError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::NoUser(_) => StatusCode::FORBIDDEN,
            Self::RoleNotFound | Self::VariantNotFound | Self::UserNotFound => {
                StatusCode::NOT_FOUND
            }
            Self::DuplicateName => StatusCode::CONFLICT,
            Self::InvalidUserId
            | Self::InvalidRoles { .. }
            | Self::InvalidSettings { .. }
            | Self::SettingsTwice
            | Self::RoleListWithRoleScope(_)
            | Self::RoleIdRequired
            | Self::NameTooLong(_)
            | Self::BlankName
            | Self::InvalidOrgId
            | Self::InvalidTenantId => StatusCode::BAD_REQUEST,
        }
    }

    fn code(&self) -> Option<&'static str> {
        match self {
            Self::DuplicateName => Some("duplicate_name"),
            _ => None,
        }
    }
}

impl From<PreferencesError> for AppError {
    fn from(err: PreferencesError) -> Self {
        match err {
            PreferencesError::InvalidRoles { ref missing } => {
                let missing = json!(missing);
                AppError::from_api(err).with_field("missing", missing)
            }
            PreferencesError::InvalidSettings {
                ref path,
                ref message,
                code,
            } => {
                let issue = Issue {
                    path: path.clone(),
                    message: message.clone(),
                    code: code.into(),
                };
                AppError::from_api(err).with_issues(vec![issue])
            }
            // The consents list answers in the `{ok:false, error}` form.
            PreferencesError::InvalidUserId | PreferencesError::UserNotFound => {
                AppError::from_api(err).ok_false()
            }
            other => AppError::from_api(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_renders_its_status_and_body() {
        let role = Uuid::nil();
        let cases: Vec<(PreferencesError, u16, Value)> = vec![
            (
                PreferencesError::Unauthenticated,
                401,
                json!({"error": "Unauthorized"}),
            ),
            (
                PreferencesError::NoUser("Cannot save a variant without a user"),
                403,
                json!({"error": "Cannot save a variant without a user"}),
            ),
            (
                PreferencesError::RoleNotFound,
                404,
                json!({"error": "Role not found"}),
            ),
            (
                PreferencesError::VariantNotFound,
                404,
                json!({"error": "Variant not found"}),
            ),
            (
                PreferencesError::UserNotFound,
                404,
                json!({"ok": false, "error": "User not found"}),
            ),
            (
                PreferencesError::InvalidUserId,
                400,
                json!({"ok": false, "error": "Invalid userId"}),
            ),
            (
                PreferencesError::DuplicateName,
                409,
                json!({"error": "A variant with this name already exists. Choose a different name.",
                       "code": "duplicate_name"}),
            ),
            (
                PreferencesError::InvalidRoles {
                    missing: vec![role],
                },
                400,
                json!({"error": "Invalid roles", "missing": [role]}),
            ),
            (
                PreferencesError::InvalidSettings {
                    path: vec![json!("settings"), json!("groupOrder"), json!(3)],
                    message: "must be a string".into(),
                    code: "invalid_type",
                },
                400,
                json!({"error": "Invalid payload: settings.groupOrder.3: must be a string",
                       "details": {"formErrors": [], "fieldErrors": {"settings": ["must be a string"]}},
                       "issues": [{"path": ["settings", "groupOrder", 3], "message": "must be a string", "code": "invalid_type"}]}),
            ),
            (
                PreferencesError::SettingsTwice,
                400,
                json!({"error": "Invalid payload: send the settings either in `settings` or at the top level, not both"}),
            ),
            (
                PreferencesError::RoleListWithRoleScope("applyToRoles"),
                400,
                json!({"error": "Invalid payload: applyToRoles: only valid when scope.type is \"user\""}),
            ),
            (
                PreferencesError::RoleIdRequired,
                400,
                json!({"error": "roleId query parameter is required"}),
            ),
            (
                PreferencesError::NameTooLong(120),
                400,
                json!({"error": "Invalid payload: name: must be at most 120 characters"}),
            ),
            (
                PreferencesError::BlankName,
                400,
                json!({"error": "Invalid payload: name: must not be blank"}),
            ),
            (
                PreferencesError::InvalidOrgId,
                400,
                json!({"error": "Invalid query parameters: orgId: must be a uuid or __all__"}),
            ),
            (
                PreferencesError::InvalidTenantId,
                400,
                json!({"error": "Invalid query parameters: tenantId: must be a uuid"}),
            ),
        ];
        for (err, status, body) in cases {
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status, "{body}");
            assert_eq!(app.body(), body);
        }
    }
}
