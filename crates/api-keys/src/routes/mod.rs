//! Thin handlers, one per file: extract, authorize, call the service, respond.

pub mod create;
pub mod delete;
pub mod list;

pub const VIEW: &str = "api_keys.view";
pub const CREATE: &str = "api_keys.create";
pub const DELETE: &str = "api_keys.delete";
