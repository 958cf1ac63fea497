//! `/customers/deals` routes.

pub mod bulk_owner;
pub mod bulk_stage;
pub mod create;
pub mod delete;
pub mod delete_by_query;
pub mod get;
pub mod list;
pub mod update;
pub mod update_by_body;
