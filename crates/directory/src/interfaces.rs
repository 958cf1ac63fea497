//! [`OrganizationDirectory`], the narrow interface other modules reach tenants
//! and organizations through (stoa-acl defines it, the server hands
//! [`PgDirectory`] to the modules that need it), so they depend on stoa-acl
//! only, not on this crate.

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use stoa_acl::OrganizationDirectory;
use stoa_core::AppError;
use uuid::Uuid;

use crate::names;
use crate::service::{DirectoryService, PgDirectory};

impl OrganizationDirectory for PgDirectory {
    fn tenant_exists<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, Result<bool, AppError>> {
        Box::pin(async move { Ok(self.tenant(conn, id).await?.is_some()) })
    }

    fn organization_exists<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        id: Uuid,
    ) -> BoxFuture<'a, Result<bool, AppError>> {
        Box::pin(async move { Ok(self.organization(conn, tenant, id).await?.is_some()) })
    }

    fn organization_active<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        id: Uuid,
    ) -> BoxFuture<'a, Result<bool, AppError>> {
        Box::pin(async move {
            Ok(self
                .organization(conn, tenant, id)
                .await?
                .is_some_and(|o| o.is_active))
        })
    }

    fn organization_name_sql(&self, id_column: &str) -> String {
        names::organization_name_sql(id_column)
    }

    fn tenant_name_sql(&self, id_column: &str) -> String {
        names::tenant_name_sql(id_column)
    }
}
