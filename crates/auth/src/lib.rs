//! stoa-auth: users, roles, ACLs, sessions and tokens.
//!
//! It provides the [`Authenticator`](stoa_acl::Authenticator) behind
//! `AuthContext` ([`AuthState`]): a JWT (bearer or `auth_token` cookie) is
//! verified, then one query checks that its session and user are live and reads
//! the ACL version; the effective ACL comes from a per-process cache tagged
//! with that version. The session endpoints (login, logout, refresh, profile,
//! reset, locale, feature checks, autologin) live here; `stoa init` uses
//! [`bootstrap::init`]. See README.md for the endpoint table.
#![doc = include_str!("../README.md")]

pub mod accounts;
pub mod acl;
pub mod bootstrap;
pub mod cache;
pub mod commands;
pub mod config;
pub mod creators;
pub mod dto;
pub mod error;
pub mod grant_sync;
pub mod grants;
pub mod i18n;
pub mod interfaces;
pub mod invite;
pub mod limits;
pub mod lock;
mod module;
pub mod nav;
pub mod onboarding;
pub mod operations;
pub mod password;
pub mod queries;
pub mod reach;
pub mod reads;
pub mod routes;
pub mod schema;
pub mod seed;
pub mod service;
pub mod state;
#[doc(hidden)]
pub mod testing;
pub mod tokens;

use std::sync::Arc;

use actix_web::web;
use stoa_acl::{Feature, ModuleInfo, Registry, RegistryError, authenticator_data};
use stoa_core::http::ServiceConfig;
use stoa_core::http::TrustedProxyDepth;
use stoa_core::rate_limit::RateLimiter;

pub use config::AuthConfig;
pub use creators::PgCreators;
pub use error::AuthError;
pub use interfaces::PgAccounts;
pub use module::AuthModule;
pub use onboarding::PgOnboarding;
pub use state::AuthState;

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "auth",
    title: "Authentication & Accounts",
};

pub const FEATURES: &[Feature] = &[
    Feature {
        id: "auth.users.list",
        title: "List users",
        module: "auth",
    },
    Feature {
        id: "auth.users.create",
        title: "Create users",
        module: "auth",
    },
    Feature {
        id: "auth.users.edit",
        title: "Edit users",
        module: "auth",
    },
    Feature {
        id: "auth.users.delete",
        title: "Delete users",
        module: "auth",
    },
    Feature {
        id: "auth.roles.list",
        title: "List roles",
        module: "auth",
    },
    Feature {
        id: "auth.roles.manage",
        title: "Manage roles",
        module: "auth",
    },
    Feature {
        id: "auth.acl.manage",
        title: "Manage access control",
        module: "auth",
    },
];

/// Registers the auth features and the admin role's default grant (`auth.*`).
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.add_role_defaults("admin", &["auth.*"]);
    registry.register_nav(nav::NAV);
    registry.add_seeder(Arc::new(bootstrap::AccountsSeeder));
    registry.add_analytics_source(USERS_ANALYTICS)?;
    // Seeders of other modules find the default roles through this crate's
    // interface, never its table.
    registry.provide_roles(Arc::new(PgAccounts));
    Ok(())
}

/// Users as dashboards may count them (live users only; no personal field),
/// hiding what `GET /auth/users` hides: super admins from every caller but
/// super admins (the relation reads dashboards' one-row `stoa_caller`,
/// `is_super_admin boolean`, defined before it in every statement; the same
/// super-admin test as the list's), and, through `organization_column`,
/// users outside a restricted caller's organizations.
pub const USERS_ANALYTICS: stoa_acl::slots::AnalyticsSource = {
    use stoa_acl::slots::{AnalyticsField, AnalyticsSource, FieldKind};
    AnalyticsSource {
        entity_type: "auth:users",
        module: "auth",
        relation: "(SELECT stoa_uu.* FROM users stoa_uu WHERE stoa_uu.deleted_at IS NULL \
                   AND ((SELECT stoa_c.is_super_admin FROM stoa_caller stoa_c) \
                   OR stoa_uu.id <> ALL(ARRAY(SELECT stoa_ua.user_id FROM user_acls stoa_ua \
                   WHERE stoa_ua.is_super_admin UNION ALL SELECT stoa_ur.user_id \
                   FROM user_roles stoa_ur WHERE stoa_ur.role_id = ANY(ARRAY(\
                   SELECT stoa_ra.role_id FROM role_acls stoa_ra WHERE stoa_ra.is_super_admin)))))) \
                   stoa_u",
        tenant_column: "stoa_u.tenant_id",
        organization_column: Some("stoa_u.organization_id"),
        date_field: "createdAt",
        fields: &[
            AnalyticsField {
                name: "id",
                sql: "stoa_u.id",
                kind: FieldKind::Text,
            },
            AnalyticsField {
                name: "createdAt",
                sql: "stoa_u.created_at",
                kind: FieldKind::Date,
            },
            AnalyticsField {
                name: "lastLoginAt",
                sql: "stoa_u.last_login_at",
                kind: FieldKind::Date,
            },
            AnalyticsField {
                name: "isActive",
                sql: "stoa_u.is_active",
                kind: FieldKind::Text,
            },
            AnalyticsField {
                name: "isConfirmed",
                sql: "stoa_u.is_confirmed",
                kind: FieldKind::Text,
            },
            AnalyticsField {
                name: "organizationId",
                sql: "stoa_u.organization_id",
                kind: FieldKind::Text,
            },
        ],
        features: &["auth.users.list"],
        read_model: Some("auth.users"),
    }
};

/// A registry with the features of the modules this crate builds on (auth and
/// directory), for tests and tools that mount only these.
pub fn base_registry() -> Result<Registry, RegistryError> {
    let mut registry = Registry::new();
    stoa_directory::register(&mut registry)?;
    register(&mut registry)?;
    Ok(registry)
}

/// Mounts the auth routes and registers the authenticator, the rate limiter
/// and the trusted proxy depth as app data for every module.
pub fn configure(state: Arc<AuthState>) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    move |cfg: &mut ServiceConfig| {
        let limiter: Arc<dyn RateLimiter> = state.limiter.clone();
        cfg.app_data(web::Data::from(state.clone()))
            .app_data(authenticator_data(state.clone()))
            .app_data(web::Data::from(state.registry.clone()))
            .app_data(web::Data::<dyn RateLimiter>::from(limiter))
            .app_data(web::Data::new(TrustedProxyDepth(
                state.config.rate_limits.trust_proxy_depth,
            )))
            .service(routes::login::sign_in::login)
            .service(routes::login::logout::logout)
            .service(routes::login::autologin::autologin)
            .service(routes::session::refresh::refresh)
            .service(routes::session::refresh_redirect::refresh_redirect)
            .service(routes::profile::get::get_profile)
            .service(routes::profile::update::update_profile)
            .service(routes::reset::request::request_reset)
            .service(routes::reset::confirm::confirm_reset)
            .service(routes::locale::get::get_locale)
            .service(routes::locale::post::post_locale)
            .service(routes::features::check::feature_check)
            .service(routes::features::catalog::features)
            .service(routes::users::list::list_users)
            .service(routes::users::create::create_user)
            .service(routes::users::update::update_user)
            .service(routes::users::delete::delete_user)
            .service(routes::roles::list::list_roles)
            .service(routes::roles::create::create_role)
            .service(routes::roles::update::update_role)
            .service(routes::roles::delete::delete_role)
            .service(routes::acls::get_role::get_role_acl)
            .service(routes::acls::put_role::put_role_acl)
            .service(routes::acls::get_user::get_user_acl)
            .service(routes::acls::put_user::put_user_acl)
            .service(routes::invite::resend_invite);
    }
}
