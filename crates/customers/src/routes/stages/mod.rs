//! `/customers/pipeline-stages` routes.

pub mod create;
pub mod delete;
pub mod delete_by_query;
pub mod list;
pub mod reorder;
pub mod update;
pub mod update_by_body;
