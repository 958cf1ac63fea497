//! stoa-devices: the devices (mobile apps, browsers) users register to receive
//! pushes.
//!
//! A device is keyed by (tenant, organization, user, `deviceId`): registering it
//! again updates the row and revives it after a deactivation (a soft delete).
//! Users see and change only their own devices; holders of `devices.admin`
//! work across the users of their tenant. The push token is a secret: no
//! endpoint returns it and action-log snapshots carry only a fingerprint. Every
//! write is an undoable command ([`commands`]). Users are looked up through
//! the `stoa_acl::UserDirectory` the server hands to [`configure`]; this crate
//! owns only `user_devices` and does not depend on stoa-auth. See
//! README.md for the endpoints.
#![doc = include_str!("../README.md")]

pub mod commands;
pub mod dto;
pub mod error;
pub mod model;
pub mod operations;
pub mod queries;
pub mod routes;
pub mod schema;
pub mod secrets;
pub mod service;

use std::sync::Arc;

use actix_web::web;
use stoa_acl::{
    Feature, ModuleInfo, NavEntry, NavPlacement, Registry, RegistryError, UserDirectory,
};
use stoa_core::crypto::KeyRing;
use stoa_core::http::ServiceConfig;

pub use commands::handlers;
pub use error::DevicesError;
pub use secrets::reencrypt_push_tokens;

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "devices",
    title: "Devices",
};

/// See and list one's own devices.
pub const VIEW: &str = "devices.view";
/// Register, update and deactivate one's own devices.
pub const MANAGE: &str = "devices.manage";
/// Work with every user's devices in the tenant.
pub const ADMIN: &str = "devices.admin";

pub const FEATURES: &[Feature] = &[
    Feature {
        id: VIEW,
        title: "View own devices",
        module: "devices",
    },
    Feature {
        id: MANAGE,
        title: "Register and manage own devices",
        module: "devices",
    },
    Feature {
        id: ADMIN,
        title: "Manage the devices of every user",
        module: "devices",
    },
];

/// The admin page listing every user's devices.
pub const NAV: &[NavEntry] = &[NavEntry {
    id: "devices.admin",
    module: "devices",
    placement: NavPlacement::Settings,
    group_id: "settings.devices",
    group_label: "Devices",
    href: "/backend/devices",
    title: "Devices",
    features: &[ADMIN],
    order: 100,
    icon: Some("smartphone"),
}];

/// Registers the features, the default grants (superadmin and admin:
/// `devices.*`; employee: view and manage own) and the admin page.
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.add_role_defaults("superadmin", &["devices.*"]);
    registry.add_role_defaults("admin", &["devices.*"]);
    registry.add_role_defaults("employee", &[VIEW, MANAGE]);
    registry.register_nav(NAV);
    Ok(())
}

/// Mounts the routes (under `/api`). `keys` encrypts push tokens at rest
/// ([`secrets`]); `users` looks up the users an admin registers devices for
/// (stoa-auth's, handed over by the server). The admin routes come first so
/// that `/devices/admin/devices` is never taken for a device id.
pub fn configure(
    keys: Arc<KeyRing>,
    users: Arc<dyn UserDirectory>,
) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    move |cfg: &mut ServiceConfig| {
        cfg.app_data(web::Data::from(keys.clone()))
            .app_data(web::Data::from(users.clone()))
            .service(routes::list::list_admin_devices)
            .service(routes::admin::register::register_admin_device)
            .service(routes::admin::get::get_admin_device)
            .service(routes::update::update_admin_device)
            .service(routes::update::update_admin_device_by_body)
            .service(routes::delete::delete_admin_device)
            .service(routes::delete::delete_admin_device_by_query)
            .service(routes::list::list_devices)
            .service(routes::register::register_device)
            .service(routes::update::update_device)
            .service(routes::update::update_device_by_body)
            .service(routes::delete::delete_device)
            .service(routes::delete::delete_device_by_query);
    }
}

/// The module descriptor the server mounts; push tokens are sealed with
/// the context's key ring.
pub fn module() -> stoa_module::Module {
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers(register)
        .handlers(handlers())
        .routes(|services, _| {
            let keys = services.keys.clone();
            Ok(Arc::new(configure(keys, services.accounts.clone())))
        })
}
