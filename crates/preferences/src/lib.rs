//! stoa-preferences: the personal settings of the auth module, split out of
//! stoa-auth.
//!
//! It owns sidebar preferences (per user and per role, per locale), sidebar
//! variants, user consents with their integrity hash, and builds the admin
//! navigation (`GET /auth/admin/nav`) from the pages every module declares.
//! Its routes keep the `/auth/...` paths and its feature
//! (`auth.sidebar.manage`) belongs to the `auth` module of the feature
//! catalog, as clients of the reference API expect. It runs on stoa-auth's
//! state (database, configuration, authenticator, registry), which
//! [`stoa_auth::configure`] registers as app data, so mount it after
//! stoa-auth. See README.md for the endpoint table.
#![doc = include_str!("../README.md")]

pub mod consents;
pub mod nav;
pub mod operations;
pub mod routes;
pub mod sidebar;
#[doc(hidden)]
pub mod testing;

use stoa_acl::{Feature, NavEntry, NavPlacement, Registry, RegistryError};
use utoipa_actix_web::service_config::ServiceConfig;

/// The features this crate checks. They belong to the `auth` module
/// ([`stoa_auth::MODULE`]): the catalog and the clients know them there.
pub const FEATURES: &[Feature] = &[Feature {
    id: sidebar::MANAGE,
    title: "Manage sidebar preferences",
    module: "auth",
}];

/// The sidebar settings pages in the admin navigation.
pub const NAV: &[NavEntry] = &[
    NavEntry {
        id: "auth.sidebar",
        module: "auth",
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
        module: "auth",
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
    registry.register(stoa_auth::MODULE, FEATURES)?;
    registry.register_nav(NAV);
    Ok(())
}

/// A registry with the features of stoa-auth's [`stoa_auth::base_registry`]
/// (auth and directory) and this crate's, for tests and tools that mount only
/// these.
pub fn base_registry() -> Result<Registry, RegistryError> {
    let mut registry = stoa_auth::base_registry()?;
    register(&mut registry)?;
    Ok(registry)
}

/// Mounts the navigation, sidebar and consent routes.
pub fn configure(cfg: &mut ServiceConfig) {
    cfg.service(routes::nav::admin_nav)
        .service(routes::sidebar::get_preferences)
        .service(routes::sidebar::update_preferences)
        .service(routes::sidebar::delete_role_preference)
        .service(routes::variants::list_variants)
        .service(routes::variants::create_variant)
        .service(routes::variants::get_variant)
        .service(routes::variants::update_variant)
        .service(routes::variants_collection::update_variant_by_body)
        .service(routes::variants::delete_variant)
        .service(routes::variants_collection::delete_variant_by_query)
        .service(routes::consents::list_consents);
}
