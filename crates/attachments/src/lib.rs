//! stoa-attachments: files attached to records, kept in object storage.
//!
//! Partitions say where files of a kind go and whether they are public; two
//! global ones exist from the start. Uploads stream into storage
//! (`stoa_core::upload`), are checked on their content (executables and
//! active content refused), counted against a per-tenant quota under a lock,
//! and recorded through the command bus. Files are served with ranges and
//! ETags, never as script in the API's origin; images are resized off the
//! executor in a bounded pool and the variants kept in storage. Deleted
//! files leave storage through an outbox subscriber ([`cleanup`]), so a crash
//! between the commit and the removal cannot leave them behind. See README.md.
#![doc = include_str!("../README.md")]

pub mod access;
pub mod bench;
pub mod cleanup;
pub mod commands;
pub mod config;
pub mod dto;
pub mod error;
pub mod extract;
pub mod images;
pub mod library_list;
pub mod model;
pub mod operations;
pub mod partitions;
pub mod routes;
pub mod schema;
pub mod service;
pub mod sniff;
pub mod store;
pub mod upload;

use std::sync::Arc;

use actix_web::web;
use stoa_acl::{Feature, ModuleInfo, NavEntry, NavPlacement, Registry, RegistryError};
use stoa_core::config::FromEnv;
use stoa_core::http::ServiceConfig;

pub use cleanup::StorageCleanup;
pub use config::AttachmentsConfig;
pub use error::AttachmentsError;

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "attachments",
    title: "Attachments",
};

/// See attachments of records and the library.
pub const VIEW: &str = "attachments.view";
/// Upload, change, move and delete attachments; manage partitions.
pub const MANAGE: &str = "attachments.manage";

pub const FEATURES: &[Feature] = &[
    Feature {
        id: VIEW,
        title: "View attachments",
        module: "attachments",
    },
    Feature {
        id: MANAGE,
        title: "Manage attachments",
        module: "attachments",
    },
];

/// The attachment library page.
pub const NAV: &[NavEntry] = &[NavEntry {
    id: "attachments.library",
    module: "attachments",
    placement: NavPlacement::Main,
    group_id: "attachments",
    group_label: "Attachments",
    href: "/backend/attachments",
    title: "Attachments",
    features: &[VIEW],
    order: 300,
    icon: Some("paperclip"),
}];

/// Registers the features and the reference's default grants (superadmin
/// and admin `attachments.*`, employee view).
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.add_role_defaults("superadmin", &["attachments.*", VIEW, MANAGE]);
    registry.add_role_defaults("admin", &["attachments.*", VIEW, MANAGE]);
    registry.add_role_defaults("employee", &[VIEW]);
    registry.register_nav(NAV);
    Ok(())
}

/// Mounts the routes (under `/api`) with `config` (limits, the partition
/// lock) and the image renderer it sizes.
pub fn configure(config: AttachmentsConfig) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    let renderer = web::Data::new(images::Renderer::new(&config));
    configure_with(config, renderer)
}

/// [`configure`] with a renderer the caller keeps (tests count its renders).
pub fn configure_with(
    config: AttachmentsConfig,
    renderer: web::Data<images::Renderer>,
) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    let config = web::Data::new(config);
    move |cfg: &mut ServiceConfig| {
        cfg.app_data(config.clone())
            .app_data(renderer.clone())
            .service(routes::partitions::list_partitions)
            .service(routes::partitions::create_partition)
            .service(routes::partitions::update_partition)
            .service(routes::partitions::delete_partition)
            .service(routes::library::list_library)
            .service(routes::library::get_library_item)
            .service(routes::library::patch_library_item)
            .service(routes::library::delete_library_item)
            .service(routes::transfer::transfer_attachments)
            .service(routes::upload::upload_attachment)
            .service(routes::record_list::list_record_attachments)
            .service(routes::delete::delete_attachment)
            .service(routes::file::serve_file)
            .service(routes::image::serve_image_with_slug)
            .service(routes::image::serve_image);
    }
}

/// The module descriptor the server mounts: its settings come from the
/// environment when mounted; a deleted file's objects leave storage after
/// commit (its subscriber).
pub fn module() -> stoa_module::Module {
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers(register)
        .routes(|_, _| {
            let config = AttachmentsConfig::from_env().map_err(|e| e.to_string())?;
            Ok(Arc::new(configure(config)))
        })
        .subscribers(|services| {
            let storage = services.storage.clone();
            vec![Arc::new(StorageCleanup::new(storage, services.db.clone()))]
        })
}
