use actix_web::http::StatusCode;
use stoa_core::{ApiError, AppError};

/// Failures of directory operations, with the reference's messages.
#[derive(Debug, thiserror::Error)]
pub enum DirectoryError {
    #[error("Tenant not found")]
    TenantNotFound,
    #[error("Not found")]
    OrganizationNotFound,
    #[error("Organization not found")]
    UnknownOrganization,
    #[error("Parent not found")]
    ParentNotFound,
    #[error("Invalid child assignment")]
    InvalidChild,
    #[error("An organization cannot be its own parent or be moved under its own descendant")]
    Cycle,
    /// A write or undo that would close a parent loop (the stored tree then
    /// stays as it was).
    #[error("This change would make an organization its own ancestor")]
    TreeCycle,
    #[error("Tenant scope required")]
    TenantScopeRequired,
    #[error("Organization is outside your allowed organizations")]
    OrganizationNotAllowed,
    #[error("Invalid query parameters: cursor: not a cursor of this list")]
    BadCursor,
    #[error(transparent)]
    Db(#[from] stoa_core::db::DbError),
}

impl From<diesel::result::Error> for DirectoryError {
    fn from(err: diesel::result::Error) -> Self {
        Self::Db(err.into())
    }
}

impl ApiError for DirectoryError {
    fn status(&self) -> StatusCode {
        match self {
            Self::TenantNotFound | Self::OrganizationNotFound => StatusCode::NOT_FOUND,
            Self::UnknownOrganization
            | Self::ParentNotFound
            | Self::InvalidChild
            | Self::Cycle
            | Self::TenantScopeRequired
            | Self::BadCursor => StatusCode::BAD_REQUEST,
            Self::OrganizationNotAllowed => StatusCode::FORBIDDEN,
            Self::TreeCycle => StatusCode::CONFLICT,
            Self::Db(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn code(&self) -> Option<&'static str> {
        matches!(self, Self::TreeCycle).then_some("organization_cycle")
    }
}

impl From<DirectoryError> for AppError {
    fn from(err: DirectoryError) -> Self {
        match err {
            DirectoryError::Db(db) => db.into(),
            other => AppError::from_api(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn every_variant_renders_its_status_and_body() {
        let cases: Vec<(DirectoryError, u16, Value)> = vec![
            (
                DirectoryError::TenantNotFound,
                404,
                json!({"error": "Tenant not found"}),
            ),
            (
                DirectoryError::OrganizationNotFound,
                404,
                json!({"error": "Not found"}),
            ),
            (
                DirectoryError::UnknownOrganization,
                400,
                json!({"error": "Organization not found"}),
            ),
            (
                DirectoryError::ParentNotFound,
                400,
                json!({"error": "Parent not found"}),
            ),
            (
                DirectoryError::InvalidChild,
                400,
                json!({"error": "Invalid child assignment"}),
            ),
            (
                DirectoryError::Cycle,
                400,
                json!({"error": "An organization cannot be its own parent or be moved under its own descendant"}),
            ),
            (
                DirectoryError::TreeCycle,
                409,
                json!({"error": "This change would make an organization its own ancestor",
                       "code": "organization_cycle"}),
            ),
            (
                DirectoryError::TenantScopeRequired,
                400,
                json!({"error": "Tenant scope required"}),
            ),
            (
                DirectoryError::OrganizationNotAllowed,
                403,
                json!({"error": "Organization is outside your allowed organizations"}),
            ),
            (
                DirectoryError::BadCursor,
                400,
                json!({"error": "Invalid query parameters: cursor: not a cursor of this list"}),
            ),
            (
                DirectoryError::Db(diesel::result::Error::BrokenTransactionManager.into()),
                500,
                json!({"error": "Internal server error"}),
            ),
        ];
        for (err, status, body) in cases {
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status, "{body}");
            assert_eq!(app.body(), body);
        }
    }
}
