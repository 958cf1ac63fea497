//! The progress endpoints' failures, mapped to the API's JSON errors here and
//! nowhere else.

use actix_web::http::StatusCode;
use stoa_core::{ApiError, AppError};

/// Failures of progress requests and enqueues, with the reference's messages.
#[derive(Debug, thiserror::Error)]
pub enum ProgressError {
    /// A query parameter is malformed or out of range (the text names it).
    #[error("Invalid query parameters: {0}")]
    InvalidQuery(String),
    /// The caller has no tenant: 403, as everywhere (`AuthContext::tenant`).
    #[error("Tenant scope required")]
    NoTenant,
    #[error("parentJobId: no such job")]
    UnknownParent,
    /// No such job in the caller's scope (or a malformed id).
    #[error("Not found")]
    JobNotFound,
    /// Unknown, finished or not cancellable.
    #[error("Cannot cancel this job")]
    CannotCancel,
    #[error("Too many items for one job")]
    TooManyItems,
}

impl ApiError for ProgressError {
    fn status(&self) -> StatusCode {
        match self {
            Self::InvalidQuery(_)
            | Self::UnknownParent
            | Self::CannotCancel
            | Self::TooManyItems => StatusCode::BAD_REQUEST,
            Self::NoTenant => StatusCode::FORBIDDEN,
            Self::JobNotFound => StatusCode::NOT_FOUND,
        }
    }
}

impl From<ProgressError> for AppError {
    fn from(err: ProgressError) -> Self {
        AppError::from_api(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn every_variant_renders_its_status_and_body() {
        let cases: Vec<(ProgressError, u16, Value)> = vec![
            (
                ProgressError::InvalidQuery("pageSize: at most 100".into()),
                400,
                json!({"error": "Invalid query parameters: pageSize: at most 100"}),
            ),
            (
                ProgressError::NoTenant,
                403,
                json!({"error": "Tenant scope required"}),
            ),
            (
                ProgressError::UnknownParent,
                400,
                json!({"error": "parentJobId: no such job"}),
            ),
            (
                ProgressError::JobNotFound,
                404,
                json!({"error": "Not found"}),
            ),
            (
                ProgressError::CannotCancel,
                400,
                json!({"error": "Cannot cancel this job"}),
            ),
            (
                ProgressError::TooManyItems,
                400,
                json!({"error": "Too many items for one job"}),
            ),
        ];
        for (err, status, body) in cases {
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status, "{body}");
            assert_eq!(app.body(), body);
        }
    }
}
