//! Full states of users, roles and ACLs: what undo and redo write back.
//!
//! A command stores the state before and after it ran as its undo payload
//! (`{before, after}`; `null` = the row did not exist). These carry secrets
//! (password hashes), so they stay in the undo payload; the snapshots shown in
//! the action log are [`UserState::view`] / [`RoleState::view`]. Users are
//! `user.rs`, roles `role.rs`; both carry their ACL as an [`AclState`].

mod role;
mod user;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

pub use role::{RoleState, role_acl, role_user_count, write_role_acl};
pub use user::{UserState, end_access, erase_user, set_user_roles, user_acl, write_user_acl};

/// An ACL row (role or user) in one tenant.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AclState {
    pub tenant_id: Uuid,
    pub features: Vec<String>,
    pub is_super_admin: bool,
    /// `None` = every organization of the tenant.
    pub organizations: Option<Vec<Uuid>>,
}

impl AclState {
    pub fn view(&self) -> Value {
        json!({
            "isSuperAdmin": self.is_super_admin,
            "features": self.features,
            "organizations": self.organizations,
        })
    }
}
