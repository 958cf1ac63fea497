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
