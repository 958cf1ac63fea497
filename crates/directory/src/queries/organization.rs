//! Organization queries: the tenant's rows, partial update, soft delete, the
//! public slug lookup and the reads other modules use (names, tenant of an
//! organization, name search).

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::search::escape_like;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{Result, assign_children, rebuild_tree, unique_slug};
use crate::dto::{OrganizationRef, UpdateOrganization};
use crate::error::DirectoryError;
use crate::model::OrganizationRow;
use crate::schema::{organizations, tenants};
use crate::service::{DirectoryService, PgDirectory};

impl PgDirectory {
    /// Live organizations of one tenant, or of every tenant.
    pub async fn organizations(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Option<Uuid>,
    ) -> Result<Vec<OrganizationRow>> {
        let mut query = organizations::table
            .filter(organizations::deleted_at.is_null())
            .select(OrganizationRow::as_select())
            .order((organizations::name.asc(), organizations::id.asc()))
            .into_boxed();
        if let Some(tenant) = tenant {
            query = query.filter(organizations::tenant_id.eq(tenant));
        }
        Ok(query.load(conn).await?)
    }

    /// [`Self::organizations`] with each one's tenant name, selected in the
    /// same statement (the super admin's `manage` view).
    pub async fn organizations_with_tenant_names(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Option<Uuid>,
    ) -> Result<Vec<(OrganizationRow, Option<String>)>> {
        let mut query = organizations::table
            .filter(organizations::deleted_at.is_null())
            .select((
                OrganizationRow::as_select(),
                // Live tenants only, as the names the view always showed.
                diesel::dsl::sql::<diesel::sql_types::Nullable<diesel::sql_types::Text>>(
                    "(SELECT stoa_t.name FROM tenants stoa_t WHERE stoa_t.id = \
                     organizations.tenant_id AND stoa_t.deleted_at IS NULL)",
                ),
            ))
            .order((organizations::name.asc(), organizations::id.asc()))
            .into_boxed();
        if let Some(tenant) = tenant {
            query = query.filter(organizations::tenant_id.eq(tenant));
        }
        Ok(query.load(conn).await?)
    }

    pub async fn update_organization(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Uuid,
        input: &UpdateOrganization,
    ) -> Result<()> {
        let current = self
            .organization(conn, tenant, input.id)
            .await?
            .ok_or(DirectoryError::OrganizationNotFound)?;
        let parent = match input.parent_id {
            Some(parent) => parent,
            None => current.parent_id,
        };
        if let Some(parent) = parent
            && parent != current.parent_id.unwrap_or(Uuid::nil())
        {
            if parent == current.id {
                return Err(DirectoryError::Cycle);
            }
            let row = self
                .organization(conn, tenant, parent)
                .await?
                .ok_or(DirectoryError::ParentNotFound)?;
            if row.ancestor_ids.contains(&current.id) {
                return Err(DirectoryError::Cycle);
            }
        }
        let slug = match &input.slug {
            None => current.slug.clone(),
            Some(None) => None,
            Some(Some(slug)) => {
                let slug = slug.trim().to_lowercase();
                if slug.is_empty() {
                    None
                } else if current.slug.as_deref() == Some(slug.as_str()) {
                    Some(slug)
                } else {
                    Some(unique_slug(conn, tenant, &slug, Some(current.id)).await?)
                }
            }
        };
        let logo_url = match &input.logo_url {
            None => current.logo_url.clone(),
            Some(v) => v.clone().filter(|s| !s.trim().is_empty()),
        };
        diesel::update(organizations::table.filter(organizations::id.eq(current.id)))
            .set((
                organizations::name.eq(input
                    .name
                    .as_deref()
                    .map(str::trim)
                    .unwrap_or(&current.name)),
                organizations::slug.eq(slug),
                organizations::logo_url.eq(logo_url),
                organizations::logo_preserve_aspect_ratio.eq(input
                    .logo_preserve_aspect_ratio
                    .unwrap_or(current.logo_preserve_aspect_ratio)),
                organizations::is_active.eq(input.is_active.unwrap_or(current.is_active)),
                organizations::parent_id.eq(parent),
            ))
            .execute(conn)
            .await?;
        if let Some(children) = &input.child_ids {
            assign_children(conn, tenant, current.id, children).await?;
        }
        rebuild_tree(conn, tenant).await
    }

    /// Soft-deletes an organization; its children move up to its parent.
    pub async fn delete_organization(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Uuid,
        id: Uuid,
    ) -> Result<()> {
        let current = self
            .organization(conn, tenant, id)
            .await?
            .ok_or(DirectoryError::OrganizationNotFound)?;
        diesel::update(
            organizations::table
                .filter(organizations::parent_id.eq(id))
                .filter(organizations::deleted_at.is_null()),
        )
        .set(organizations::parent_id.eq(current.parent_id))
        .execute(conn)
        .await?;
        diesel::update(organizations::table.filter(organizations::id.eq(id)))
            .set((
                organizations::deleted_at.eq(OffsetDateTime::now_utc()),
                organizations::is_active.eq(false),
                organizations::slug.eq(None::<String>),
            ))
            .execute(conn)
            .await?;
        rebuild_tree(conn, tenant).await
    }

    /// Public lookup: the oldest live organization with this slug.
    pub async fn lookup_organization(
        &self,
        conn: &mut AsyncPgConnection,
        slug: &str,
    ) -> Result<Option<OrganizationRef>> {
        Ok(organizations::table
            .filter(organizations::slug.eq(slug))
            .filter(organizations::deleted_at.is_null())
            .order((organizations::created_at.asc(), organizations::id.asc()))
            .select((organizations::id, organizations::name, organizations::slug))
            .first::<(Uuid, String, Option<String>)>(conn)
            .await
            .optional()?
            .map(|(id, name, slug)| OrganizationRef { id, name, slug }))
    }

    /// The tenant of a live organization (for callers that may act in any tenant).
    pub async fn organization_tenant(
        &self,
        conn: &mut AsyncPgConnection,
        id: Uuid,
    ) -> Result<Option<Uuid>> {
        Ok(organizations::table
            .filter(organizations::id.eq(id))
            .filter(organizations::deleted_at.is_null())
            .select(organizations::tenant_id)
            .first(conn)
            .await
            .optional()?)
    }

    /// Live organizations whose name contains `term` (case-insensitive), in
    /// `tenant` or, with `None`, in every tenant. At most `limit` ids.
    pub async fn organization_ids_named(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Option<Uuid>,
        term: &str,
        limit: i64,
    ) -> Result<Vec<Uuid>> {
        let mut query = organizations::table
            .filter(organizations::deleted_at.is_null())
            .filter(organizations::name.ilike(format!("%{}%", escape_like(term))))
            .select(organizations::id)
            .limit(limit)
            .into_boxed();
        if let Some(tenant) = tenant {
            query = query.filter(organizations::tenant_id.eq(tenant));
        }
        Ok(query.load(conn).await?)
    }

    /// Names of the given tenants and organizations (deleted ones included), for
    /// logs that show who acted where.
    pub async fn names(
        &self,
        conn: &mut AsyncPgConnection,
        tenant_ids: &[Uuid],
        organization_ids: &[Uuid],
    ) -> Result<(HashMap<Uuid, String>, HashMap<Uuid, String>)> {
        let tenants_by_id = if tenant_ids.is_empty() {
            HashMap::new()
        } else {
            tenants::table
                .filter(tenants::id.eq_any(tenant_ids))
                .select((tenants::id, tenants::name))
                .load::<(Uuid, String)>(conn)
                .await?
                .into_iter()
                .collect()
        };
        let organizations_by_id = if organization_ids.is_empty() {
            HashMap::new()
        } else {
            organizations::table
                .filter(organizations::id.eq_any(organization_ids))
                .select((organizations::id, organizations::name))
                .load::<(Uuid, String)>(conn)
                .await?
                .into_iter()
                .collect()
        };
        Ok((tenants_by_id, organizations_by_id))
    }
}
