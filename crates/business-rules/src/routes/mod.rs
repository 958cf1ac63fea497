//! Handlers: extract, check the feature, call the service, answer.

pub mod execute;
pub mod logs;
pub mod members;
pub mod options;
pub mod rules;
pub mod sets;

use stoa_core::AppError;
use uuid::Uuid;

use crate::error::RulesError;

/// A uuid from a path or query value, or `err`.
pub fn uuid_or(value: Option<&str>, err: RulesError) -> Result<Uuid, AppError> {
    value
        .map(str::trim)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| err.into())
}
