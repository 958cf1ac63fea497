//! stoa-directory: tenants and the organization tree.
//!
//! Tenants are managed by super admins; organizations form a tree per tenant
//! with a materialised ancestor path (`ancestor_ids`) so "an organization and
//! its descendants" is one indexed query. Other modules use
//! [`DirectoryService`] (implemented by [`PgDirectory`]), or, to avoid depending
//! on this crate, `stoa_acl::OrganizationDirectory` (also implemented by
//! [`PgDirectory`], handed over by the server); the public lookups
//! answer login pages without authentication. See README.md for the endpoints.
#![doc = include_str!("../README.md")]

pub mod commands;
pub mod dto;
pub mod error;
mod interfaces;
pub mod model;
pub mod names;
pub mod operations;
pub mod provision;
pub mod queries;
pub mod routes;
pub mod schema;
pub mod seed;
pub mod seed_sync;
pub mod service;

use stoa_acl::{Feature, ModuleInfo, NavEntry, NavPlacement, Registry, RegistryError};
use stoa_core::http::ServiceConfig;

pub use error::DirectoryError;
pub use queries::slugify;
pub use service::{DirectoryService, PgDirectory};

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "directory",
    title: "Directory",
};

pub const FEATURES: &[Feature] = &[
    Feature {
        id: "directory.tenants.view",
        title: "View tenants",
        module: "directory",
    },
    Feature {
        id: "directory.tenants.manage",
        title: "Manage tenants",
        module: "directory",
    },
    Feature {
        id: "directory.organizations.view",
        title: "View organizations",
        module: "directory",
    },
    Feature {
        id: "directory.organizations.manage",
        title: "Manage organizations",
        module: "directory",
    },
];

/// The directory's backend pages in the admin navigation.
pub const NAV: &[NavEntry] = &[
    NavEntry {
        id: "directory.organizations",
        module: "directory",
        placement: NavPlacement::Main,
        group_id: "directory",
        group_label: "Directory",
        href: "/backend/directory/organizations",
        title: "Organizations",
        features: &["directory.organizations.view"],
        order: 10,
        icon: Some("building"),
    },
    NavEntry {
        id: "directory.tenants",
        module: "directory",
        placement: NavPlacement::Main,
        group_id: "directory",
        group_label: "Directory",
        href: "/backend/directory/tenants",
        title: "Tenants",
        features: &["directory.tenants.view"],
        order: 20,
        icon: Some("landmark"),
    },
];

/// Registers the directory's features and backend pages.
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.add_role_defaults("superadmin", &["directory.tenants.*"]);
    registry.add_role_defaults(
        "admin",
        &[
            "directory.organizations.view",
            "directory.organizations.manage",
        ],
    );
    registry.register_nav(NAV);
    registry.add_analytics_source(ORGANIZATIONS_ANALYTICS)?;
    Ok(())
}

/// Organizations as dashboards may count them (live ones; an organization
/// is in its own scope).
pub const ORGANIZATIONS_ANALYTICS: stoa_acl::slots::AnalyticsSource = {
    use stoa_acl::slots::{AnalyticsField, AnalyticsSource, FieldKind};
    AnalyticsSource {
        entity_type: "directory:organizations",
        module: "directory",
        relation: "(SELECT * FROM organizations WHERE deleted_at IS NULL) stoa_o",
        tenant_column: "stoa_o.tenant_id",
        organization_column: Some("stoa_o.id"),
        date_field: "createdAt",
        fields: &[
            AnalyticsField {
                name: "id",
                sql: "stoa_o.id",
                kind: FieldKind::Text,
            },
            AnalyticsField {
                name: "createdAt",
                sql: "stoa_o.created_at",
                kind: FieldKind::Date,
            },
            AnalyticsField {
                name: "depth",
                sql: "stoa_o.depth",
                kind: FieldKind::Number,
            },
            AnalyticsField {
                name: "isActive",
                sql: "stoa_o.is_active",
                kind: FieldKind::Text,
            },
            AnalyticsField {
                name: "parentId",
                sql: "stoa_o.parent_id",
                kind: FieldKind::Text,
            },
        ],
        features: &["directory.organizations.view"],
        read_model: None,
    }
};

/// Mounts the directory's routes (under `/api`).
pub fn configure(cfg: &mut ServiceConfig) {
    cfg.service(routes::tenants::list::list_tenants)
        .service(routes::tenants::create::create_tenant)
        .service(routes::tenants::update::update_tenant)
        .service(routes::tenants::delete::delete_tenant)
        .service(routes::lookup::tenant::lookup_tenant)
        .service(routes::lookup::organization::lookup_organization)
        .service(routes::organizations::list::list_organizations)
        .service(routes::organizations::create::create_organization)
        .service(routes::organizations::update::update_organization)
        .service(routes::organizations::delete::delete_organization)
        .service(routes::switcher::organization_switcher);
}

/// The module descriptor the server mounts: tenants and organizations.
pub fn module() -> stoa_module::Module {
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers(register)
        .handlers(commands::handlers())
        .routes(|_, _| Ok(std::sync::Arc::new(configure)))
}
