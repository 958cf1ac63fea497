//! Auth mutations as commands. Users, roles and their ACLs are tenant
//! resources of the resource kit (`stoa_acl::resource`): two `Resource`s,
//! [`UserState`] and [`RoleState`], and one ACL target, [`Acl`] of either
//! owner. Each write records the full state before and after it ran
//! (`stoa_core::command::Tracked`); undo writes the "before" state back (or
//! removes what the write created) and redo writes the "after" state again,
//! keeping ids. The rules a write and its undo both answer to are in
//! `authorize.rs`; e-mail, password hash and super-admin flags are never
//! written back.

mod account;
pub mod acls;
mod authorize;
pub mod roles;
pub mod state;
pub mod users;

use std::sync::Arc;

use stoa_core::command::{CommandHandler, StateHandler};

pub use acls::{Acl, AclOwner, RoleAcl, RoleOwner, UserAcl, UserOwner};
pub use authorize::{role_in_reach, user_in_reach};
pub use state::{AclState, RoleState, UserState};
pub use stoa_core::command::{Tracked, entry, tracked};
pub use users::UpdateProfileCommand;

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
        StateHandler::<RoleAcl>::boxed(acls::ROLE_ACL_UPDATE),
        StateHandler::<UserAcl>::boxed(acls::USER_ACL_UPDATE),
    ]
}
