//! One handler per endpoint: extract, call the service, answer.

pub mod catalog;
pub mod data;
pub mod layout;
pub mod roles;
pub mod users;

const TAG: &str = "Dashboards";
