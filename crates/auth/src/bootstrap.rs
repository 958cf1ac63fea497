//! `stoa init`: the first tenant, its root organization, the default roles and
//! a super admin (plus, with `--demo`, the reference's demo accounts).

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_acl::{FirstUser, NewTenant, Registry, TenantSeeder};
use stoa_core::AppError;
use stoa_core::db::Db;
use stoa_directory::provision::{TenantRequest, provision_tenant};
use uuid::Uuid;

use crate::password::{PasswordPolicy, hash_password};
use crate::queries::{normalize_email, valid_email};
use crate::schema::{role_acls, roles, user_roles, users};

/// The roles every tenant starts with.
pub const DEFAULT_ROLES: [&str; 3] = ["superadmin", "admin", "employee"];

#[derive(Clone, Debug)]
pub struct InitRequest {
    pub tenant: String,
    pub organization: String,
    pub email: String,
    pub password: String,
    /// Also create `admin@<domain>` and `employee@<domain>`; skip the password policy.
    pub demo: bool,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitOutcome {
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub user_id: Uuid,
    #[serde(skip)]
    pub demo_accounts: Vec<(String, &'static str)>,
}

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("invalid input: {0}")]
    Invalid(String),
    #[error("a user with e-mail {0} already exists; nothing was changed")]
    EmailTaken(String),
    #[error(transparent)]
    Db(#[from] stoa_core::db::DbError),
    #[error("{0}")]
    Other(String),
}

impl From<diesel::result::Error> for InitError {
    fn from(err: diesel::result::Error) -> Self {
        Self::Db(err.into())
    }
}

impl From<stoa_directory::DirectoryError> for InitError {
    fn from(err: stoa_directory::DirectoryError) -> Self {
        Self::Other(err.to_string())
    }
}

impl From<AppError> for InitError {
    fn from(err: AppError) -> Self {
        Self::Other(err.to_string())
    }
}

/// Seeds a new tenant's accounts: the default roles with every module's
/// default grants, then the first users, each holding its default role. Runs
/// first (order 0) so other modules' seeders can refer to the roles.
pub struct AccountsSeeder;

impl TenantSeeder for AccountsSeeder {
    fn id(&self) -> &'static str {
        "auth.accounts"
    }

    fn order(&self) -> i32 {
        0
    }

    /// First users and default roles belong to provisioning only.
    fn syncs_existing(&self) -> bool {
        false
    }

    fn seed<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        registry: &'a Registry,
        tenant: &'a NewTenant,
    ) -> BoxFuture<'a, Result<(), AppError>> {
        Box::pin(async move {
            let role_ids = create_default_roles(conn, tenant.tenant_id, registry).await?;
            // Grant sync must never re-add a default the tenant's admins revoke.
            crate::grant_sync::record_tenant(conn, registry, tenant.tenant_id).await?;
            for first in &tenant.users {
                let user: Uuid = diesel::insert_into(users::table)
                    .values((
                        users::id.eq(first.id),
                        users::tenant_id.eq(tenant.tenant_id),
                        users::organization_id.eq(tenant.organization_id),
                        users::email.eq(&first.email),
                        users::name.eq(&first.name),
                        users::password_hash.eq(&first.password_hash),
                        users::is_confirmed.eq(true),
                    ))
                    .returning(users::id)
                    .get_result(conn)
                    .await?;
                let index = DEFAULT_ROLES
                    .iter()
                    .position(|r| *r == first.role)
                    .ok_or_else(|| AppError::internal("a first user names an unknown role"))?;
                diesel::insert_into(user_roles::table)
                    .values((
                        user_roles::user_id.eq(user),
                        user_roles::role_id.eq(role_ids[index]),
                    ))
                    .execute(conn)
                    .await?;
            }
            Ok(())
        })
    }
}

/// Creates the default roles of `tenant` with the registry's default grants;
/// returns their ids in [`DEFAULT_ROLES`] order.
pub async fn create_default_roles(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    registry: &Registry,
) -> Result<Vec<Uuid>, diesel::result::Error> {
    let mut ids = Vec::with_capacity(DEFAULT_ROLES.len());
    for name in DEFAULT_ROLES {
        let id: Uuid = diesel::insert_into(roles::table)
            .values((roles::tenant_id.eq(tenant), roles::name.eq(name)))
            .returning(roles::id)
            .get_result(conn)
            .await?;
        let features: Vec<String> = registry
            .role_defaults(name)
            .iter()
            .map(|s| s.to_string())
            .collect();
        diesel::insert_into(role_acls::table)
            .values((
                role_acls::role_id.eq(id),
                role_acls::tenant_id.eq(tenant),
                role_acls::features.eq(features),
                role_acls::is_super_admin.eq(name == "superadmin"),
                role_acls::organizations.eq(None::<Vec<Uuid>>),
            ))
            .execute(conn)
            .await?;
        ids.push(id);
    }
    Ok(ids)
}

/// Runs `stoa init`.
pub async fn init(
    db: &Db,
    registry: &Registry,
    policy: &PasswordPolicy,
    req: InitRequest,
) -> Result<InitOutcome, InitError> {
    let email = normalize_email(&req.email);
    if !valid_email(&email) {
        return Err(InitError::Invalid(format!(
            "`{}` is not an e-mail address",
            req.email
        )));
    }
    if req.tenant.trim().is_empty() || req.organization.trim().is_empty() {
        return Err(InitError::Invalid(
            "tenant and organization names must not be empty".into(),
        ));
    }
    if !req.demo {
        policy.check(&req.password).map_err(InitError::Invalid)?;
    }
    let domain = email
        .split_once('@')
        .map(|(_, d)| d.to_string())
        .unwrap_or_default();
    let mut accounts = vec![(email.clone(), "superadmin")];
    if req.demo {
        accounts.push((format!("admin@{domain}"), "admin"));
        accounts.push((format!("employee@{domain}"), "employee"));
    }
    let hash = hash_password(req.password.clone())
        .await
        .map_err(|e| InitError::Other(e.to_string()))?;
    // The accounts seeder is what creates the roles and users init reports.
    let mut registry = registry.clone();
    registry.add_seeder(Arc::new(AccountsSeeder));
    let outcome = db
        .transaction::<_, InitError, _>(|conn| {
            Box::pin(async move {
                for (address, _) in &accounts {
                    let taken: i64 = users::table
                        .filter(users::email.eq(address))
                        .filter(users::deleted_at.is_null())
                        .count()
                        .get_result(conn)
                        .await?;
                    if taken > 0 {
                        return Err(InitError::EmailTaken(address.clone()));
                    }
                }
                let users = accounts
                    .iter()
                    .map(|(email, role)| FirstUser {
                        id: Uuid::new_v4(),
                        email: email.clone(),
                        password_hash: Some(hash.clone()),
                        role,
                        name: None,
                    })
                    .collect();
                let request = TenantRequest {
                    name: req.tenant.trim().to_string(),
                    is_active: true,
                    organization: req.organization.trim().to_string(),
                    users,
                };
                let new = provision_tenant(conn, &registry, request).await?;
                // The super admin is the first of the first users.
                let first_user = new.users.iter().map(|u| u.id).next().unwrap_or_default();
                Ok(InitOutcome {
                    tenant_id: new.tenant_id,
                    organization_id: new.organization_id,
                    user_id: first_user,
                    demo_accounts: if req.demo {
                        accounts.clone()
                    } else {
                        Vec::new()
                    },
                })
            })
        })
        .await?;
    Ok(outcome)
}
