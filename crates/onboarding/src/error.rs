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
