//! The one module context: every shared service, built once per process.
//!
//! The server builds a [`Services`] (`stoa_server::services`) and hands the
//! same value to everything that runs module code: the mounted routes
//! ([`Services::configurator`] registers each service as app data, first,
//! so a handler extracting one always finds it — in `stoa serve`, in the
//! OpenAPI document's app and in tests alike), the job handlers, the outbox
//! subscribers and the workers. A module takes what it needs from it when
//! it is built, never from a global.

use std::sync::Arc;

use actix_web::web;
use stoa_core::Config;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::http::ApiConfigurator;
use stoa_core::outbound::Outbound;
use stoa_core::storage::Storage;
use stoa_mail::Mailer;

use crate::accounts::{
    Accounts, AclResolver, CreatorResolver, Onboarding, RoleDirectory, UserDirectory,
};
use crate::keys::KeyDirectory;
use crate::organizations::OrganizationDirectory;
use crate::registry::Registry;

/// Every shared service a module may use (cheap to clone: handles and `Arc`s).
#[derive(Clone)]
pub struct Services {
    pub db: Db,
    /// The process configuration (database, HTTP, outbound, storage).
    pub config: Arc<Config>,
    /// Every module's features, operations, navigation, seeders and guards.
    pub registry: Arc<Registry>,
    /// Users, ACL resolution and roles (stoa-auth's `PgAccounts`).
    pub accounts: Arc<dyn Accounts>,
    /// A job's creator, resolved again when the job runs.
    pub creators: Arc<dyn CreatorResolver>,
    /// Password policy and hashing, first users and their sessions.
    pub onboarding: Arc<dyn Onboarding>,
    /// Tenants and organizations (stoa-directory's `PgDirectory`).
    pub organizations: Arc<dyn OrganizationDirectory>,
    /// API keys (stoa-api-keys' `PgKeyDirectory`; `keys::NoKeys` without it).
    pub api_keys: Arc<dyn KeyDirectory>,
    pub storage: Storage,
    pub outbound: Outbound,
    /// Secrets at rest (`STOA_ENCRYPTION_KEY`).
    pub keys: Arc<KeyRing>,
    /// Sends at once; mail that must follow a commit is queued with
    /// `stoa_mail::queue` and delivered by the outbox (`MailSubscriber`).
    pub mailer: Arc<dyn Mailer>,
    /// Calls of the platform's own API as an API key (business rules'
    /// `CALL_OPEN_MERCATO`), registered by the server once its app exists.
    pub platform: crate::platform::PlatformSlot,
}

impl Services {
    /// Registers every service as app data, under the type a handler
    /// extracts: `web::Data<Db>`, `web::Data<Registry>`, `web::Data<Storage>`,
    /// `web::Data<Outbound>`, `web::Data<KeyRing>`, `web::Data<dyn Mailer>`,
    /// `web::Data<dyn UserDirectory>` (and `AclResolver`, `RoleDirectory`,
    /// `CreatorResolver`, `Onboarding`, `OrganizationDirectory`, `KeyDirectory`) and `web::Data<Services>`.
    pub fn configurator(&self) -> ApiConfigurator {
        let db = web::Data::new(self.db.clone());
        let registry = web::Data::from(self.registry.clone());
        let storage = web::Data::new(self.storage.clone());
        let outbound = web::Data::new(self.outbound.clone());
        let keys = web::Data::from(self.keys.clone());
        let mailer: web::Data<dyn Mailer> = web::Data::from(self.mailer.clone());
        let users: web::Data<dyn UserDirectory> = web::Data::from(as_users(&self.accounts));
        let acl: web::Data<dyn AclResolver> = web::Data::from(as_acl(&self.accounts));
        let roles: web::Data<dyn RoleDirectory> = web::Data::from(as_roles(&self.accounts));
        let creators: web::Data<dyn CreatorResolver> = web::Data::from(self.creators.clone());
        let onboarding: web::Data<dyn Onboarding> = web::Data::from(self.onboarding.clone());
        let organizations: web::Data<dyn OrganizationDirectory> =
            web::Data::from(self.organizations.clone());
        let api_keys: web::Data<dyn KeyDirectory> = web::Data::from(self.api_keys.clone());
        let services = web::Data::new(self.clone());
        Arc::new(move |cfg| {
            cfg.app_data(db.clone())
                .app_data(registry.clone())
                .app_data(storage.clone())
                .app_data(outbound.clone())
                .app_data(keys.clone())
                .app_data(mailer.clone())
                .app_data(users.clone())
                .app_data(acl.clone())
                .app_data(roles.clone())
                .app_data(creators.clone())
                .app_data(onboarding.clone())
                .app_data(organizations.clone())
                .app_data(api_keys.clone())
                .app_data(services.clone());
        })
    }
}

// Trait upcasts of the one accounts object (each trait is a supertrait of
// `Accounts`).
fn as_users(accounts: &Arc<dyn Accounts>) -> Arc<dyn UserDirectory> {
    accounts.clone()
}

fn as_acl(accounts: &Arc<dyn Accounts>) -> Arc<dyn AclResolver> {
    accounts.clone()
}

fn as_roles(accounts: &Arc<dyn Accounts>) -> Arc<dyn RoleDirectory> {
    accounts.clone()
}
