//! The module's own state, registered as app data by [`crate::configure`]:
//! the database, the consent key, and the user and role directories
//! (stoa-auth's, handed over by the server through `stoa_acl::accounts`).
//!
//! The handlers also read two things every module shares, registered as app
//! data by the module that provides authentication (stoa-auth): the
//! [`stoa_acl::Authenticator`] (through `AuthContext`, and directly for the
//! navigation's own scope) and the feature [`stoa_acl::Registry`].

use std::sync::Arc;

use stoa_acl::{Accounts, RoleDirectory, UserDirectory};
use stoa_core::db::Db;

use crate::consents::ConsentKey;

/// Everything the preferences handlers share.
pub struct PreferencesState {
    pub db: Db,
    /// The key of consent records' integrity hashes.
    pub consent_key: ConsentKey,
    /// Users, for the consents list (stoa-auth's `PgAccounts` in the server).
    pub users: Arc<dyn UserDirectory>,
    /// Roles with their grants, for the grant boundary of role-scoped
    /// writes (stoa-auth's `PgAccounts` in the server).
    pub roles: Arc<dyn RoleDirectory>,
}

impl PreferencesState {
    /// The state over `db`, deriving the consent key from `secret` (the JWT
    /// secret, `STOA_JWT_SECRET`, under the consent key's own label), with
    /// `accounts` as the user and role directory.
    pub fn new(db: Db, secret: &str, accounts: Arc<dyn Accounts>) -> Self {
        Self {
            db,
            consent_key: ConsentKey::derive(secret),
            users: accounts.clone(),
            roles: accounts,
        }
    }
}

impl std::fmt::Debug for PreferencesState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreferencesState")
            .field("consent_key", &self.consent_key)
            .finish_non_exhaustive()
    }
}
