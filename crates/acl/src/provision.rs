//! What a new tenant starts with, contributed by every module.
//!
//! Provisioning (`stoa_directory::provision`) creates the tenant and its root
//! organization, then runs every registered [`TenantSeeder`] on the same
//! connection, inside the caller's transaction: stoa-auth's creates the
//! default roles with every module's default grants and the first users; a
//! module with initial data (dashboards' role widgets, attachments'
//! partitions) registers its own. `stoa init`, `POST /directory/tenants` and
//! onboarding all provision through it, so every tenant starts alike.

use std::fmt;
use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use stoa_core::AppError;
use uuid::Uuid;

use crate::accounts::RoleDirectory;
use crate::registry::Registry;

/// A first user of a new tenant.
#[derive(Clone, Debug)]
pub struct FirstUser {
    /// Chosen before provisioning, so the caller knows the user it created
    /// ([`NewTenant::user_ids`]).
    pub id: Uuid,
    /// Normalised (trimmed, lower-cased).
    pub email: String,
    /// Already hashed; `None` = the user must be invited or reset.
    pub password_hash: Option<String>,
    /// A default role name (`superadmin`, `admin`, `employee`).
    pub role: &'static str,
    /// The display name (`users.name`), if known.
    pub name: Option<String>,
}

/// The tenant being provisioned, as seeders see it.
#[derive(Clone, Debug)]
pub struct NewTenant {
    pub tenant_id: Uuid,
    /// The root organization.
    pub organization_id: Uuid,
    /// Its first users; empty when `stoa seed sync` seeds a tenant that
    /// existed before the seeder.
    pub users: Vec<FirstUser>,
}

impl NewTenant {
    /// The ids of the first users provisioning created, in order.
    pub fn user_ids(&self) -> Vec<Uuid> {
        self.users.iter().map(|u| u.id).collect()
    }
}

/// Seeds a module's initial data into a new tenant.
pub trait TenantSeeder: Send + Sync {
    /// `module.what`, e.g. `auth.accounts`.
    fn id(&self) -> &'static str;
    /// Seeders run in ascending order: accounts (roles, first users) at 0,
    /// module data at the default 100, so it may refer to the roles.
    fn order(&self) -> i32 {
        100
    }
    /// Whether tenants created before the seeder was registered get its
    /// data from `stoa seed sync` (once; default yes). A seeder of what only
    /// a brand-new tenant can have (its first users) says no: the sync then
    /// only records it as done.
    fn syncs_existing(&self) -> bool {
        true
    }
    fn seed<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        registry: &'a Registry,
        tenant: &'a NewTenant,
    ) -> BoxFuture<'a, Result<(), AppError>>;
}

/// The registered seeders (a newtype so the registry stays `Debug`).
#[derive(Clone, Default)]
pub struct Seeders(pub(crate) Vec<Arc<dyn TenantSeeder>>);

impl fmt::Debug for Seeders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|s| s.id()))
            .finish()
    }
}

/// The role directory seeders find the tenant's default roles in, installed
/// by the owner of accounts (`stoa_auth::base_registry`): a seeder that
/// gives roles their initial data (dashboards' role widgets) asks the
/// owner's interface instead of reading its `roles` table.
#[derive(Clone, Default)]
pub struct SeedRoles(pub(crate) Option<Arc<dyn RoleDirectory>>);

impl fmt::Debug for SeedRoles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "SeedRoles(provided)"
        } else {
            "SeedRoles(none)"
        })
    }
}

/// Runs every seeder of `registry` for `tenant`, in order.
pub async fn seed_tenant(
    conn: &mut AsyncPgConnection,
    registry: &Registry,
    tenant: &NewTenant,
) -> Result<(), AppError> {
    let mut seeders = registry.seeders().to_vec();
    seeders.sort_by_key(|s| s.order());
    for seeder in seeders {
        seeder.seed(conn, registry, tenant).await?;
    }
    Ok(())
}
