//! The queue's failures, mapped to the API's JSON errors here and nowhere else.

use actix_web::http::StatusCode;
use stoa_core::{ApiError, AppError};

/// Failures of enqueueing a job.
#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    /// More items than a record counts (`i32`).
    #[error("Too many items for one job")]
    TooManyItems,
}

impl ApiError for JobsError {
    fn status(&self) -> StatusCode {
        match self {
            Self::TooManyItems => StatusCode::BAD_REQUEST,
        }
    }
}

impl From<JobsError> for AppError {
    fn from(err: JobsError) -> Self {
        AppError::from_api(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_renders_its_status_and_message() {
        let app = AppError::from(JobsError::TooManyItems);
        assert_eq!(app.status(), StatusCode::BAD_REQUEST);
        assert_eq!(app.body()["error"], "Too many items for one job");
    }
}
