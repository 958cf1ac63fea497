//! `/directory/tenants` (super admins): one handler per file. The write
//! handlers call `service::tenants`, which opens the transaction.

pub mod create;
pub mod delete;
pub mod list;
pub mod update;

const VIEW: &str = "directory.tenants.view";
const MANAGE: &str = "directory.tenants.manage";
