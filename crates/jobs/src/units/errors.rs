//! Why a job's run or one of its units stopped, and what a unit reports.

use std::fmt;

use serde::{Deserialize, Serialize};
use stoa_core::AppError;
use stoa_core::db::DbError;

/// Why a job's run stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobError {
    /// A passing failure (database, network, a conflict): this attempt fails
    /// and the job is retried with back-off until `max_attempts`.
    Retry(String),
    /// Retrying cannot help (the creator lost the right, the input is invalid):
    /// the job is `dead` at once and its progress record `failed` with the message.
    Final(String),
}

impl JobError {
    pub fn retry(message: impl fmt::Display) -> Self {
        Self::Retry(message.to_string())
    }

    pub fn fatal(message: impl fmt::Display) -> Self {
        Self::Final(message.to_string())
    }

    pub fn message(&self) -> &str {
        match self {
            Self::Retry(m) | Self::Final(m) => m,
        }
    }

    pub fn is_final(&self) -> bool {
        matches!(self, Self::Final(_))
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for JobError {}

impl From<String> for JobError {
    fn from(message: String) -> Self {
        Self::Retry(message)
    }
}

/// Client errors (400, 401, 403, 404, 422, …) are final: the same input in the
/// same scope fails the same way. Conflicts, rate limits and server errors
/// are retried.
impl From<AppError> for JobError {
    fn from(err: AppError) -> Self {
        let status = err.status();
        let passing = status.is_server_error()
            || status == actix_web::http::StatusCode::CONFLICT
            || status == actix_web::http::StatusCode::TOO_MANY_REQUESTS;
        if passing {
            tracing::debug!(error = ?err, "job step failed");
            Self::Retry(err.message().to_string())
        } else {
            Self::Final(err.message().to_string())
        }
    }
}

impl From<diesel::result::Error> for JobError {
    fn from(err: diesel::result::Error) -> Self {
        Self::Retry(format!("database: {err}"))
    }
}

impl From<DbError> for JobError {
    fn from(err: DbError) -> Self {
        Self::Retry(err.to_string())
    }
}

/// An item that failed for good, as the job's result lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedItem {
    pub id: String,
    pub message: String,
}

/// What a unit did: by default every item succeeded; [`UnitReport::fail`]
/// records an item that failed for good while the others' effects commit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnitReport {
    pub(super) failed: Vec<FailedItem>,
}

impl UnitReport {
    pub fn ok() -> Self {
        Self::default()
    }

    /// Records item `id` as failed with `message`.
    pub fn fail(&mut self, id: impl Into<String>, message: impl Into<String>) {
        self.failed.push(FailedItem {
            id: id.into(),
            message: message.into(),
        });
    }

    pub fn failed(&self) -> &[FailedItem] {
        &self.failed
    }
}

/// Why a unit did not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitError {
    /// The unit's items failed for good: its effects roll back, the unit is
    /// recorded as done with these items failed, and the job goes on.
    Items { items: Vec<String>, error: String },
    /// The job stops: retried, or dead at once ([`JobError`]).
    Job(JobError),
}

impl UnitError {
    /// Every item in `items` failed with `error`.
    pub fn items(
        items: impl IntoIterator<Item = impl Into<String>>,
        error: impl fmt::Display,
    ) -> Self {
        Self::Items {
            items: items.into_iter().map(Into::into).collect(),
            error: error.to_string(),
        }
    }
}

impl From<JobError> for UnitError {
    fn from(err: JobError) -> Self {
        Self::Job(err)
    }
}

impl From<AppError> for UnitError {
    fn from(err: AppError) -> Self {
        Self::Job(err.into())
    }
}

impl From<diesel::result::Error> for UnitError {
    fn from(err: diesel::result::Error) -> Self {
        Self::Job(err.into())
    }
}
