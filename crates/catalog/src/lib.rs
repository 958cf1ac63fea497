//! stoa-catalog: catalog products — CRUD in the `/{id}` and the collection
//! style, a list with search, filters, sorting and keyset paging, undoable
//! writes, and `POST /catalog/bulk-delete`, which runs as a job acting as its
//! creator ([`bulk`]).
//!
//! A product belongs to a tenant and one of its organizations; every write
//! keeps that organization inside the caller's scope. Prices are
//! [`stoa_core::money::Money`] with an ISO currency. Other modules reach
//! products through the registry slots declared in [`slots`] (the
//! `catalog:products` analytics source, a widget, the rule entity) and the
//! domain events `catalog.product.created|updated|deleted`. Demo data:
//! [`seed`]. See README.md for the endpoints.
#![doc = include_str!("../README.md")]

pub mod ai_tools;
pub mod bulk;
pub mod commands;
pub mod dto;
pub mod error;
pub mod model;
pub mod operations;
pub mod queries;
pub mod record_target;
pub mod routes;
pub mod schema;
pub mod seed;
pub mod service;
pub mod slots;

use std::sync::Arc;

use actix_web::web;
use stoa_acl::{
    Feature, ModuleInfo, NavEntry, NavPlacement, OrganizationDirectory, Registry, RegistryError,
};
use stoa_core::http::ServiceConfig;

pub use commands::handlers;
pub use error::CatalogError;

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "catalog",
    title: "Catalog",
};

/// See and list products.
pub const VIEW: &str = "catalog.products.view";
/// Create, change and delete products (one by one or in bulk).
pub const MANAGE: &str = "catalog.products.manage";

pub const FEATURES: &[Feature] = &[
    Feature {
        id: VIEW,
        title: "View products",
        module: "catalog",
    },
    Feature {
        id: MANAGE,
        title: "Manage products",
        module: "catalog",
    },
];

/// The products page of the back office.
pub const NAV: &[NavEntry] = &[NavEntry {
    id: "catalog.products",
    module: "catalog",
    placement: NavPlacement::Main,
    group_id: "catalog",
    group_label: "Catalog",
    href: "/backend/catalog/products",
    title: "Products",
    features: &[VIEW],
    order: 300,
    icon: Some("package"),
}];

/// Registers the features, the default grants (superadmin and admin:
/// `catalog.*`; employee: view and manage products, as the reference), the
/// products page and the registry slots ([`slots`]).
/// `organizations` checks where the AI update tool moves a product.
pub fn register(
    registry: &mut Registry,
    organizations: &Arc<dyn OrganizationDirectory>,
) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.add_role_defaults("superadmin", &["catalog.*"]);
    registry.add_role_defaults("admin", &["catalog.*"]);
    registry.add_role_defaults("employee", &[VIEW, MANAGE]);
    registry.register_nav(NAV);
    slots::register(registry)?;
    registry.add_record_target(record_target::product_target())?;
    registry.add_demo_data(seed::demo_data())?;
    for tool in ai_tools::tools(organizations) {
        registry.add_ai_tool(tool)?;
    }
    Ok(())
}

/// Mounts the routes (under `/api`). `organizations` checks that the
/// organization a product goes to exists in the tenant (stoa-directory's,
/// handed over by the server).
pub fn configure(
    organizations: Arc<dyn OrganizationDirectory>,
) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    move |cfg: &mut ServiceConfig| {
        cfg.app_data(web::Data::from(organizations.clone()))
            .service(routes::list::list_products)
            .service(routes::create::create_product)
            .service(routes::update_by_body::update_product_by_body)
            .service(routes::delete_by_query::delete_product_by_query)
            .service(routes::get::get_product)
            .service(routes::update::update_product)
            .service(routes::delete::delete_product)
            .service(routes::bulk_delete::bulk_delete_products);
    }
}

/// The module's job handlers (the bulk delete), for the server's
/// `job_handlers(services)`.
pub fn job_handlers() -> Vec<Arc<dyn stoa_jobs::JobHandler>> {
    vec![Arc::new(bulk::BulkDelete)]
}

/// The module descriptor the server mounts, with the context's
/// organization directory for the routes and the AI update tool alike.
pub fn module(services: &stoa_acl::Services) -> stoa_module::Module {
    let organizations = services.organizations.clone();
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers({
            let organizations = organizations.clone();
            move |registry| register(registry, &organizations)
        })
        .handlers(handlers())
        .routes(move |_, _| Ok(Arc::new(configure(organizations.clone()))))
        .jobs(|_| job_handlers())
}
