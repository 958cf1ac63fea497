//! Failures of API-key operations, with the reference's messages.

use actix_web::http::StatusCode;
use stoa_core::{ApiError, AppError};

#[derive(Debug, thiserror::Error)]
pub enum ApiKeysError {
    #[error("Tenant context required")]
    TenantRequired,
    #[error("Tenant not found")]
    TenantNotFound,
    #[error("Organization not found")]
    OrganizationNotFound,
    #[error("Organization out of scope")]
    OrganizationOutOfScope,
    #[error("Role {0} not found")]
    RoleNotFound(String),
    #[error("Role {0} belongs to another tenant")]
    RoleOfAnotherTenant(String),
    #[error("expiresAt must be in the future")]
    ExpiryInPast,
    #[error("expiresAt cannot be later than the expiry of the API key creating this key")]
    ExpiryAfterCreator,
    #[error("API keys can be created through at most {max} API keys in a row")]
    ChainTooLong { max: usize },
    #[error("ID is required")]
    IdRequired,
    #[error("Not found")]
    NotFound,
}

impl ApiError for ApiKeysError {
    fn status(&self) -> StatusCode {
        match self {
            Self::OrganizationOutOfScope | Self::ChainTooLong { .. } => StatusCode::FORBIDDEN,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::TenantRequired
            | Self::TenantNotFound
            | Self::OrganizationNotFound
            | Self::RoleNotFound(_)
            | Self::RoleOfAnotherTenant(_)
            | Self::ExpiryInPast
            | Self::ExpiryAfterCreator
            | Self::IdRequired => StatusCode::BAD_REQUEST,
        }
    }

    fn code(&self) -> Option<&'static str> {
        match self {
            Self::ChainTooLong { .. } => Some("api_key_chain_too_long"),
            _ => None,
        }
    }
}

impl From<ApiKeysError> for AppError {
    fn from(err: ApiKeysError) -> Self {
        AppError::from_api(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_renders_its_status_and_message() {
        let cases = [
            (ApiKeysError::TenantRequired, 400, "Tenant context required"),
            (ApiKeysError::TenantNotFound, 400, "Tenant not found"),
            (
                ApiKeysError::OrganizationNotFound,
                400,
                "Organization not found",
            ),
            (
                ApiKeysError::OrganizationOutOfScope,
                403,
                "Organization out of scope",
            ),
            (
                ApiKeysError::RoleNotFound("x".into()),
                400,
                "Role x not found",
            ),
            (
                ApiKeysError::RoleOfAnotherTenant("admin".into()),
                400,
                "Role admin belongs to another tenant",
            ),
            (
                ApiKeysError::ExpiryInPast,
                400,
                "expiresAt must be in the future",
            ),
            (
                ApiKeysError::ExpiryAfterCreator,
                400,
                "expiresAt cannot be later than the expiry of the API key creating this key",
            ),
            (
                ApiKeysError::ChainTooLong { max: 5 },
                403,
                "API keys can be created through at most 5 API keys in a row",
            ),
            (ApiKeysError::IdRequired, 400, "ID is required"),
            (ApiKeysError::NotFound, 404, "Not found"),
        ];
        for (err, status, message) in cases {
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status, "{message}");
            assert_eq!(app.body()["error"], message);
        }
    }
}
