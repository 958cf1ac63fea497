//! The onboarding module's failures. Every answer is `{ok:false, error}` (the
//! reference's form), with a `code` where a client may act on it.

use actix_web::http::StatusCode;
use stoa_core::{ApiError, AppError};

#[derive(Debug, thiserror::Error)]
pub enum OnboardingError {
    /// `SELF_SERVICE_ONBOARDING_ENABLED` is not `true`.
    #[error("Self-service onboarding is disabled.")]
    Disabled,
    /// The body is not JSON.
    #[error("Invalid payload")]
    InvalidPayload,
    /// No request has this token (never issued, replaced by a newer link, or pruned).
    #[error("This verification link is invalid. Please sign up again.")]
    InvalidToken,
    #[error("This verification link has expired. Please sign up again.")]
    TokenExpired,
    #[error("This verification link has already been used. Sign in to your workspace.")]
    TokenUsed,
    /// An account with the request's e-mail was created after it was submitted.
    #[error("An account with this e-mail already exists. Sign in instead.")]
    AccountExists,
    #[error("Invalid tenant id.")]
    InvalidTenantId,
    /// The status page of a workspace the browser did not verify.
    #[error("Not authorized for this tenant.")]
    NotAuthorizedForTenant,
    #[error("Onboarding request not found.")]
    NotFound,
}

impl ApiError for OnboardingError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Disabled | Self::NotFound => StatusCode::NOT_FOUND,
            Self::InvalidPayload | Self::InvalidToken | Self::InvalidTenantId => {
                StatusCode::BAD_REQUEST
            }
            Self::TokenExpired => StatusCode::GONE,
            Self::TokenUsed | Self::AccountExists => StatusCode::CONFLICT,
            Self::NotAuthorizedForTenant => StatusCode::FORBIDDEN,
        }
    }

    fn code(&self) -> Option<&'static str> {
        Some(match self {
            Self::Disabled => "onboarding_disabled",
            Self::InvalidPayload => "invalid_payload",
            Self::InvalidToken => "invalid_token",
            Self::TokenExpired => "token_expired",
            Self::TokenUsed => "token_used",
            Self::AccountExists => "account_exists",
            Self::InvalidTenantId => "invalid_tenant_id",
            Self::NotAuthorizedForTenant => "not_authorized_for_tenant",
            Self::NotFound => "not_found",
        })
    }
}

impl From<OnboardingError> for AppError {
    fn from(err: OnboardingError) -> Self {
        AppError::from_api(err).ok_false()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn every_variant_renders_its_status_and_body() {
        let cases: Vec<(OnboardingError, u16, &str, &str)> = vec![
            (
                OnboardingError::Disabled,
                404,
                "onboarding_disabled",
                "Self-service onboarding is disabled.",
            ),
            (
                OnboardingError::InvalidPayload,
                400,
                "invalid_payload",
                "Invalid payload",
            ),
            (
                OnboardingError::InvalidToken,
                400,
                "invalid_token",
                "This verification link is invalid. Please sign up again.",
            ),
            (
                OnboardingError::TokenExpired,
                410,
                "token_expired",
                "This verification link has expired. Please sign up again.",
            ),
            (
                OnboardingError::TokenUsed,
                409,
                "token_used",
                "This verification link has already been used. Sign in to your workspace.",
            ),
            (
                OnboardingError::AccountExists,
                409,
                "account_exists",
                "An account with this e-mail already exists. Sign in instead.",
            ),
            (
                OnboardingError::InvalidTenantId,
                400,
                "invalid_tenant_id",
                "Invalid tenant id.",
            ),
            (
                OnboardingError::NotAuthorizedForTenant,
                403,
                "not_authorized_for_tenant",
                "Not authorized for this tenant.",
            ),
            (
                OnboardingError::NotFound,
                404,
                "not_found",
                "Onboarding request not found.",
            ),
        ];
        for (err, status, code, message) in cases {
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status, "{message}");
            let body: Value = json!({"ok": false, "error": message, "code": code});
            assert_eq!(app.body(), body);
        }
    }
}
