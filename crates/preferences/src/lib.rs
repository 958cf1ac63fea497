//! stoa-preferences: the personal settings of the auth module, split out of
//! stoa-auth.
//!
//! It owns sidebar preferences (per user and per role, per locale), sidebar
//! variants, user consents with their integrity hash, and builds the admin
//! navigation (`GET /auth/admin/nav`) from the pages every module declares.
//! Its routes keep the `/auth/...` paths and its feature
//! (`auth.sidebar.manage`) belongs to the `auth` module of the feature
//! catalog, as clients of the reference API expect. It does not depend on
//! stoa-auth: it has its own state ([`state::PreferencesState`]: database,
//! consent key, the user directory of `stoa_acl::accounts`) and uses the
//! authenticator and registry every module shares as app data. See README.md
//! for the endpoint table.
#![doc = include_str!("../README.md")]

pub mod consents;
pub mod error;
pub mod nav;
pub mod operations;
pub mod routes;
pub mod service;
pub mod sidebar;
pub mod state;

use std::sync::Arc;

use actix_web::web;
use stoa_acl::{Feature, ModuleInfo, NavEntry, NavPlacement, Registry, RegistryError};
use stoa_core::http::ServiceConfig;

pub use error::PreferencesError;
pub use state::PreferencesState;

/// The id of the module this crate's features and pages belong to: stoa-auth's
/// `auth` (the catalog and the clients know them there).
pub const AUTH_MODULE_ID: &str = "auth";

/// The `auth` module as the catalog shows it: the same id and title as
/// stoa-auth registers (whichever registers last sets the title).
pub const AUTH_MODULE: ModuleInfo = ModuleInfo {
    id: AUTH_MODULE_ID,
    title: "Authentication & Accounts",
};

/// The features this crate checks, in the `auth` module ([`AUTH_MODULE`]).
pub const FEATURES: &[Feature] = &[Feature {
    id: sidebar::MANAGE,
    title: "Manage sidebar preferences",
    module: AUTH_MODULE_ID,
}];

/// The sidebar settings pages in the admin navigation.
pub const NAV: &[NavEntry] = &[
    NavEntry {
        id: "auth.sidebar",
        module: AUTH_MODULE_ID,
        placement: NavPlacement::Settings,
        group_id: "auth",
        group_label: "Users & access",
        href: "/backend/settings/sidebar",
        title: "Sidebar customization",
        features: &[sidebar::MANAGE],
        order: 10,
        icon: Some("panel-left"),
    },
    NavEntry {
        id: "auth.profile.sidebar",
        module: AUTH_MODULE_ID,
        placement: NavPlacement::Profile,
        group_id: "account",
        group_label: "Account",
        href: "/backend/profile/sidebar",
        title: "My sidebar",
        features: &[],
        order: 20,
        icon: Some("panel-left"),
    },
];

/// Registers the sidebar feature under the `auth` module and the sidebar
/// pages. Default grants come with stoa-auth's (`admin`: `auth.*`).
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(AUTH_MODULE, FEATURES)?;
    registry.register_nav(NAV);
    Ok(())
}

/// Mounts the navigation, sidebar and consent routes (under `/api`) and
/// registers `state` as app data. The authenticator and the feature registry
/// come from the module providing authentication (stoa-auth), registered as
/// app data for every module.
pub fn configure(state: PreferencesState) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    let state = web::Data::from(Arc::new(state));
    move |cfg: &mut ServiceConfig| {
        cfg.app_data(state.clone())
            .service(routes::nav::admin_nav)
            .service(routes::sidebar::get::get_preferences)
            .service(routes::sidebar::update::update_preferences)
            .service(routes::sidebar::delete::delete_role_preference)
            .service(routes::variants::list::list_variants)
            .service(routes::variants::create::create_variant)
            .service(routes::variants::get::get_variant)
            .service(routes::variants::update::update_variant)
            .service(routes::variants::update_by_body::update_variant_by_body)
            .service(routes::variants::delete::delete_variant)
            .service(routes::variants::delete_by_query::delete_variant_by_query)
            .service(routes::consents::list_consents);
    }
}

/// The module descriptor the server mounts; the consent key derives from
/// `secret` (`STOA_JWT_SECRET`).
pub fn module(secret: &str) -> stoa_module::Module {
    let secret = secret.to_string();
    stoa_module::Module::new("preferences", operations::OPERATIONS)
        .registers(register)
        .routes(move |services, _| {
            let state =
                PreferencesState::new(services.db.clone(), &secret, services.accounts.clone());
            Ok(Arc::new(configure(state)))
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_auth_module_is_stoa_auths() {
        assert_eq!(super::AUTH_MODULE.id, stoa_auth::MODULE.id);
        assert_eq!(super::AUTH_MODULE.title, stoa_auth::MODULE.title);
    }
}
