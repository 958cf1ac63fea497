//! The directory's SQL: the Postgres implementation of [`DirectoryService`]
//! and `PgDirectory`'s query methods, by topic. Every function takes a
//! connection so callers can compose it into their own transaction (`stoa
//! init` creates a tenant, an organization and a user in one). No HTTP types.

mod organization;
mod slugs;
pub(crate) mod snapshots;
mod tenant;
mod tree;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::dto::CreateOrganization;
use crate::error::DirectoryError;
use crate::model::{OrganizationRow, TenantRow};
use crate::schema::{organizations, tenants};
use crate::service::{DirectoryService, PgDirectory};

pub use slugs::slugify;
use slugs::unique_slug;
pub(crate) use tenant::{TENANTS_READ_DEPS, live_tenants};
use tree::assign_children;
pub use tree::{ensure_acyclic, lock_tree, organization_tenant_of, rebuild_tree};

type Result<T> = std::result::Result<T, DirectoryError>;

impl DirectoryService for PgDirectory {
    async fn tenant(&self, conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<TenantRow>> {
        Ok(tenants::table
            .filter(tenants::id.eq(id).and(tenants::deleted_at.is_null()))
            .select(TenantRow::as_select())
            .first(conn)
            .await
            .optional()?)
    }

    async fn organization(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Uuid,
        id: Uuid,
    ) -> Result<Option<OrganizationRow>> {
        Ok(organizations::table
            .filter(organizations::id.eq(id))
            .filter(organizations::tenant_id.eq(tenant))
            .filter(organizations::deleted_at.is_null())
            .select(OrganizationRow::as_select())
            .first(conn)
            .await
            .optional()?)
    }

    async fn subtree_ids(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Uuid,
        roots: &[Uuid],
    ) -> Result<Vec<Uuid>> {
        if roots.is_empty() {
            return Ok(Vec::new());
        }
        Ok(organizations::table
            .filter(organizations::tenant_id.eq(tenant))
            .filter(organizations::deleted_at.is_null())
            .filter(
                organizations::id
                    .eq_any(roots)
                    .or(organizations::ancestor_ids.overlaps_with(roots)),
            )
            .select(organizations::id)
            .load(conn)
            .await?)
    }

    async fn create_tenant(&self, conn: &mut AsyncPgConnection, name: &str) -> Result<Uuid> {
        Ok(diesel::insert_into(tenants::table)
            .values(tenants::name.eq(name.trim()))
            .returning(tenants::id)
            .get_result(conn)
            .await?)
    }

    async fn create_organization(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Uuid,
        input: CreateOrganization,
    ) -> Result<Uuid> {
        if let Some(parent) = input.parent_id
            && self.organization(conn, tenant, parent).await?.is_none()
        {
            return Err(DirectoryError::ParentNotFound);
        }
        let id = Uuid::new_v4();
        let base = match input
            .slug
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            Some(slug) => slug.to_lowercase(),
            None => slugify(&input.name),
        };
        let slug = unique_slug(conn, tenant, &base, None).await?;
        diesel::insert_into(organizations::table)
            .values((
                organizations::id.eq(id),
                organizations::tenant_id.eq(tenant),
                organizations::name.eq(input.name.trim()),
                organizations::slug.eq(slug),
                organizations::logo_url.eq(input.logo_url.as_deref()),
                organizations::logo_preserve_aspect_ratio
                    .eq(input.logo_preserve_aspect_ratio.unwrap_or(false)),
                organizations::is_active.eq(input.is_active.unwrap_or(true)),
                organizations::parent_id.eq(input.parent_id),
                organizations::root_id.eq(id),
            ))
            .execute(conn)
            .await?;
        if let Some(children) = &input.child_ids {
            assign_children(conn, tenant, id, children).await?;
        }
        rebuild_tree(conn, tenant).await?;
        Ok(id)
    }
}
