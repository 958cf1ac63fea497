//! `/directory/organizations`: one handler per file. The write handlers
//! call `service::organizations`, which checks the caller's scope and opens
//! the transaction.

pub mod create;
pub mod delete;
pub mod list;
pub mod update;

const VIEW: &str = "directory.organizations.view";
const MANAGE: &str = "directory.organizations.manage";
