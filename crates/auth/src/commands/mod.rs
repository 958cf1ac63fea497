//! Auth mutations as commands. Users, roles and their ACLs are undoable: each
//! command records the full state of the resource before and after it ran
//! (`stoa_core::command::Tracked`); undo writes the "before" state back (or
//! removes what the command created) and redo writes the "after" state again,
//! keeping ids. What undo may write is authorized in `authorize.rs`; e-mail,
//! password hash and super-admin flags are never written back.

pub mod acls;
mod authorize;
pub mod roles;
pub mod state;
pub mod users;

use std::sync::Arc;

use stoa_core::command::{CommandHandler, StateHandler};

pub use acls::{RoleAclState, UpdateRoleAclCommand, UpdateUserAclCommand, UserAclState};
pub use roles::{CreateRoleCommand, DeleteRoleCommand, UpdateRoleCommand};
pub use state::{AclState, RoleState, UserState};
pub use stoa_core::command::tracked::lock_row;
pub use stoa_core::command::{Tracked, entry, tracked};
pub use users::{CreateUserCommand, DeleteUserCommand, UpdateProfileCommand, UpdateUserCommand};

pub use stoa_acl::accounts::USER_KIND;
pub const ROLE_KIND: &str = "auth.role";

/// The undo/redo handlers of the auth module.
pub fn handlers() -> Vec<Arc<dyn CommandHandler>> {
    vec![
        StateHandler::<UserState>::boxed(users::CREATE),
        StateHandler::<UserState>::boxed(users::UPDATE),
        StateHandler::<UserState>::boxed(users::DELETE),
        StateHandler::<RoleState>::boxed(roles::CREATE),
        StateHandler::<RoleState>::boxed(roles::UPDATE),
        StateHandler::<RoleState>::boxed(roles::DELETE),
        StateHandler::<RoleAclState>::boxed(acls::ROLE_ACL_UPDATE),
        StateHandler::<UserAclState>::boxed(acls::USER_ACL_UPDATE),
    ]
}
