//! One handler per file: extract, check the feature, call the service, answer.

pub mod deals;
pub mod pipelines;
pub mod stages;
