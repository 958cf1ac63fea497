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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn every_variant_renders_its_status_and_body() {
        let cases: Vec<(AuditLogError, u16, Value)> = vec![
            (
                AuditLogError::InvalidQuery("limit: at most 200".into()),
                400,
                json!({"error": "Invalid query parameters: limit: at most 200"}),
            ),
            (AuditLogError::NoTenant, 403, json!({"error": "Forbidden"})),
            (
                AuditLogError::InvalidUndoToken,
                400,
                json!({"error": "Invalid undo token"}),
            ),
            (
                AuditLogError::InvalidLogId,
                400,
                json!({"error": "Invalid log id"}),
            ),
        ];
        for (err, status, body) in cases {
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status, "{body}");
            assert_eq!(app.body(), body);
        }
    }
}
