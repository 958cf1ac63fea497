//! `/auth/feature-check` and `/auth/features`, one handler per file.

pub mod catalog;
pub mod check;
