//! Helpers for integration tests of stoa-auth and of modules that need a
//! signed-in caller. Not used by the server.

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use stoa_core::db::Db;
use stoa_core::http::ApiConfigurator;
use uuid::Uuid;

use crate::bootstrap::{InitRequest, create_default_roles, init};
use crate::config::AuthConfig;
use crate::password::PasswordPolicy;
use crate::queries;
use crate::schema::{role_acls, roles, user_acls, user_roles, users};
use crate::state::AuthState;
use stoa_core::config::FromEnv;

/// The password of every seeded account.
pub const PASSWORD: &str = "secret";

/// Auth state over `db` with test settings adjusted by `tweak`.
/// The user directory the server hands modules (this crate's accounts).
pub fn user_directory() -> Arc<dyn stoa_acl::UserDirectory> {
    Arc::new(crate::PgAccounts)
}

/// The organization directory the server hands modules (stoa-directory's).
pub fn organization_directory() -> Arc<dyn stoa_acl::OrganizationDirectory> {
    Arc::new(stoa_directory::PgDirectory)
}

pub fn state_with(db: &Db, tweak: impl FnOnce(&mut AuthConfig)) -> Arc<AuthState> {
    let registry = crate::base_registry().unwrap_or_default();
    state_with_registry(db, registry, tweak)
}

/// Auth state over `db` with `registry` (features, seeders) and test settings.
pub fn state_with_registry(
    db: &Db,
    registry: stoa_acl::Registry,
    tweak: impl FnOnce(&mut AuthConfig),
) -> Arc<AuthState> {
    let mut config = AuthConfig::for_tests();
    tweak(&mut config);
    match AuthState::new(db.clone(), config, Arc::new(registry)) {
        Ok(state) => Arc::new(state),
        Err(err) => panic!("auth state: {err}"),
    }
}

/// The kept list answers of sessions signed with the test settings' secret,
/// for `stoa_testkit::TestAppBuilder::reads_with`.
pub fn reads(db: &Db) -> Arc<dyn stoa_core::http::ReadCache> {
    Arc::new(state_with(db, |_| {}).reads())
}

/// The auth module's configurator with test settings.
pub fn module(db: &Db) -> ApiConfigurator {
    Arc::new(crate::configure(state_with(db, |_| {})))
}

/// A seeded tenant: root organization, default roles and the three demo users.
#[derive(Clone, Debug)]
pub struct Tenant {
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub superadmin: Uuid,
    pub admin: Uuid,
    pub employee: Uuid,
    pub domain: String,
}

/// Seeds a tenant like `stoa init --demo` (password [`PASSWORD`]).
pub async fn seed_tenant(db: &Db, name: &str, domain: &str) -> Tenant {
    let registry = crate::base_registry().unwrap_or_default();
    seed_tenant_with(db, &registry, name, domain).await
}

/// Seeds a tenant whose default roles get `registry`'s default grants.
pub async fn seed_tenant_with(
    db: &Db,
    registry: &stoa_acl::Registry,
    name: &str,
    domain: &str,
) -> Tenant {
    let outcome = init(
        db,
        registry,
        &PasswordPolicy::default(),
        InitRequest {
            tenant: name.into(),
            organization: name.into(),
            email: format!("superadmin@{domain}"),
            password: PASSWORD.into(),
            demo: true,
        },
    )
    .await
    .unwrap_or_else(|e| panic!("seed tenant: {e}"));
    let mut conn = db.conn().await.unwrap_or_else(|e| panic!("{e}"));
    let id_of = async |conn: &mut diesel_async::AsyncPgConnection, email: String| -> Uuid {
        users::table
            .filter(users::email.eq(email))
            .select(users::id)
            .first(conn)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    };
    Tenant {
        tenant_id: outcome.tenant_id,
        organization_id: outcome.organization_id,
        superadmin: outcome.user_id,
        admin: id_of(&mut conn, format!("admin@{domain}")).await,
        employee: id_of(&mut conn, format!("employee@{domain}")).await,
        domain: domain.into(),
    }
}

/// A user with the given role ACL: creates a role named `role` in the tenant
/// with `features` (and organization restriction), and a user holding it.
pub async fn user_with_features(
    db: &Db,
    tenant: &Tenant,
    email: &str,
    features: &[&str],
    organizations: Option<Vec<Uuid>>,
    home_organization: Option<Uuid>,
) -> Uuid {
    let mut conn = db.conn().await.unwrap_or_else(|e| panic!("{e}"));
    let role: Uuid = diesel::insert_into(roles::table)
        .values((
            roles::tenant_id.eq(tenant.tenant_id),
            roles::name.eq(format!("role-{email}")),
        ))
        .returning(roles::id)
        .get_result(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    diesel::insert_into(role_acls::table)
        .values((
            role_acls::role_id.eq(role),
            role_acls::tenant_id.eq(tenant.tenant_id),
            role_acls::features.eq(features.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
            role_acls::organizations.eq(organizations),
        ))
        .execute(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let user: Uuid = diesel::insert_into(users::table)
        .values((
            users::tenant_id.eq(tenant.tenant_id),
            users::organization_id.eq(home_organization.or(Some(tenant.organization_id))),
            users::email.eq(email),
        ))
        .returning(users::id)
        .get_result(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    diesel::insert_into(user_roles::table)
        .values((user_roles::user_id.eq(user), user_roles::role_id.eq(role)))
        .execute(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    user
}

/// Replaces a user's ACL override.
pub async fn set_user_acl(db: &Db, user: Uuid, tenant: Uuid, features: &[&str], super_admin: bool) {
    let mut conn = db.conn().await.unwrap_or_else(|e| panic!("{e}"));
    diesel::delete(user_acls::table.filter(user_acls::user_id.eq(user)))
        .execute(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    diesel::insert_into(user_acls::table)
        .values((
            user_acls::user_id.eq(user),
            user_acls::tenant_id.eq(tenant),
            user_acls::features.eq(features.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
            user_acls::is_super_admin.eq(super_admin),
        ))
        .execute(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Creates default roles for a tenant made some other way.
pub async fn default_roles(db: &Db, tenant: Uuid) -> Vec<Uuid> {
    let mut conn = db.conn().await.unwrap_or_else(|e| panic!("{e}"));
    let registry = crate::base_registry().unwrap_or_default();
    create_default_roles(&mut conn, tenant, &registry)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A signed access token for `user` with a fresh session (no password hashing).
pub async fn token_for(db: &Db, user: Uuid) -> String {
    let mut conn = db.conn().await.unwrap_or_else(|e| panic!("{e}"));
    let row = queries::user_by_id(&mut conn, user)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("no user {user}"));
    let roles = queries::role_names(&mut conn, &row)
        .await
        .unwrap_or_default();
    let config = AuthConfig::for_tests();
    let (sid, _, _) = queries::create_session(&mut conn, user, false, config.session_ttl)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    crate::tokens::TokenKeys::new(config.jwt_secret.expose())
        .sign(&queries::claims_for(&row, sid, roles, config.access_ttl))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A live organization `name` under `parent` in `tenant` (the tree rebuilt).
pub async fn organization(db: &Db, tenant: Uuid, parent: Uuid, name: &str) -> Uuid {
    use stoa_directory::DirectoryService;
    let mut conn = db.conn().await.unwrap_or_else(|e| panic!("{e}"));
    let input = stoa_directory::dto::CreateOrganization {
        tenant_id: Some(tenant),
        name: name.into(),
        slug: None,
        logo_url: None,
        logo_preserve_aspect_ratio: None,
        is_active: None,
        parent_id: Some(parent),
        child_ids: None,
    };
    stoa_directory::PgDirectory
        .create_organization(&mut conn, tenant, input)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A module context (`stoa_acl::Services`) for tests of one crate: this
/// database, `registry`, stoa-auth's accounts and job creators (users; API
/// keys are the server's wiring), memory storage, a fixed key ring and the
/// outbox mailer. The server's own tests use `stoa_server::test_services`.
pub fn services(db: &Db, registry: stoa_acl::Registry) -> stoa_acl::Services {
    let vars = std::collections::HashMap::from([(
        "DATABASE_URL".to_string(),
        "postgres://tests@127.0.0.1:1/none".to_string(),
    )]);
    let config = stoa_core::Config::from_vars(&vars).unwrap_or_else(|e| panic!("{e}"));
    let outbound =
        stoa_core::outbound::Outbound::new(&config.outbound).unwrap_or_else(|e| panic!("{e}"));
    stoa_acl::Services {
        db: db.clone(),
        config: Arc::new(config),
        registry: Arc::new(registry),
        accounts: Arc::new(crate::PgAccounts),
        creators: Arc::new(crate::PgCreators::new()),
        onboarding: Arc::new(crate::PgOnboarding::new(&AuthConfig::for_tests())),
        organizations: Arc::new(stoa_directory::PgDirectory),
        // API keys are the server's wiring (stoa-auth does not depend on them).
        api_keys: Arc::new(stoa_acl::keys::NoKeys),
        storage: stoa_core::storage::Storage::memory(),
        outbound,
        keys: Arc::new(stoa_core::crypto::KeyRing::new(&[7; 32], &[])),
        mailer: Arc::new(stoa_mail::OutboxMailer::new(db.clone())),
        platform: Default::default(),
    }
}
