//! Thin handlers, one per file: extract, authorize, call the service
//! ([`crate::service`], which runs each write in one transaction through the
//! command bus), respond. [`crate::configure`] mounts them.

pub mod admin;
pub mod delete;
pub mod delete_by_query;
pub mod list;
pub mod register;
pub mod update;
pub mod update_by_body;
