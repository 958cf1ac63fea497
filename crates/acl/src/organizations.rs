//! The narrow interface through which modules reach tenants and organizations
//! without depending on stoa-directory.
//!
//! stoa-directory owns the `tenants` and `organizations` tables and implements
//! [`OrganizationDirectory`] (`stoa_directory::PgDirectory`); the server hands
//! it to the modules that need it when it mounts them
//! (`stoa_api_keys::configure(roles, organizations)`), as it hands over the
//! account interfaces of [`crate::accounts`]. Every method takes the caller's
//! connection, so a lookup joins the transaction the module is in.

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use stoa_core::AppError;
use uuid::Uuid;

/// Tenants and organizations: whether they exist, and their names as SQL a
/// module's own list query selects.
pub trait OrganizationDirectory: Send + Sync + 'static {
    /// Whether the live (not deleted) tenant `id` exists.
    fn tenant_exists<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, Result<bool, AppError>>;

    /// Whether the live organization `id` exists in `tenant`.
    fn organization_exists<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        id: Uuid,
    ) -> BoxFuture<'a, Result<bool, AppError>>;

    /// Whether the organization `id` of `tenant` exists, is not deleted and
    /// is active (work in an inactive organization is refused). The default
    /// knows only whether it is live.
    fn organization_active<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        id: Uuid,
    ) -> BoxFuture<'a, Result<bool, AppError>> {
        self.organization_exists(conn, tenant, id)
    }

    /// The SQL expression (type `text`, NULL when missing) of the name of the
    /// organization whose id the column `id_column` holds (SQL, e.g.
    /// `api_keys.organization_id`). Other modules' list queries select it in
    /// their own statement (no lookup after the page).
    fn organization_name_sql(&self, id_column: &str) -> String;

    /// The same for the name of the tenant whose id `id_column` holds.
    fn tenant_name_sql(&self, id_column: &str) -> String;
}
