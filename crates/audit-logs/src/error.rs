//! The audit-log endpoints' failures, mapped to the API's JSON errors here
//! and nowhere else.

use actix_web::http::StatusCode;
use stoa_core::{ApiError, AppError};

/// Failures of audit-log requests, with the reference's messages.
#[derive(Debug, thiserror::Error)]
pub enum AuditLogError {
    /// A query parameter is malformed or out of range (the text names it).
    #[error("Invalid query parameters: {0}")]
    InvalidQuery(String),
    /// No tenant and not a super admin.
    #[error("Forbidden")]
    NoTenant,
    #[error("Invalid undo token")]
    InvalidUndoToken,
    #[error("Invalid log id")]
    InvalidLogId,
}

impl ApiError for AuditLogError {
    fn status(&self) -> StatusCode {
        match self {
            Self::InvalidQuery(_) | Self::InvalidUndoToken | Self::InvalidLogId => {
                StatusCode::BAD_REQUEST
            }
            Self::NoTenant => StatusCode::FORBIDDEN,
        }
    }
}

impl From<AuditLogError> for AppError {
    fn from(err: AuditLogError) -> Self {
        AppError::from_api(err)
    }
}
