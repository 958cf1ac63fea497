//! `/auth/roles/acl` and `/auth/users/acl`: read and replace grants, one
//! handler per file; the rules are in `accounts/acl_edit.rs`.

pub mod get_role;
pub mod get_user;
pub mod put_role;
pub mod put_user;

const MANAGE: &str = "auth.acl.manage";
