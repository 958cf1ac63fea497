//! Thin handlers: extract, authorize, call the service ([`crate::service`],
//! which runs each write in one transaction through the command bus),
//! respond. The forms of one operation (the caller's own devices and the
//! admin's, by path and in the collection form) share a file and its one
//! call into the service, so that a rule cannot be fixed in one form and
//! forgotten in another. [`crate::configure`] mounts them.

pub mod admin;
pub mod delete;
pub mod list;
pub mod register;
pub mod update;
