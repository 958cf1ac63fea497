//! `/auth/roles`: one handler per file; the rules are in `accounts/roles.rs`.

pub mod create;
pub mod delete;
pub mod list;
pub mod update;

const LIST: &str = "auth.roles.list";
const MANAGE: &str = "auth.roles.manage";
