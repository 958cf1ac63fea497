//! One handler per file: extract, check the feature, call the service, answer.

// Before the resources' modules: `write_routes!` is textual.
#[macro_use]
mod writes;

pub mod deals;
pub mod pipelines;
pub mod stages;
