//! The directory's rules: tenants, the organization tree and its materialised
//! paths. Every function takes a connection so callers can compose it into
//! their own transaction (`stoa init` creates a tenant, an organization and a
//! user in one).

use std::collections::{HashMap, HashSet};

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::DirectoryError;
use crate::model::*;
use crate::schema::{organizations, tenants};

type Result<T> = std::result::Result<T, DirectoryError>;

/// What other modules may ask of the directory.
#[allow(async_fn_in_trait)]
pub trait DirectoryService {
    /// A live tenant.
    async fn tenant(&self, conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<TenantRow>>;
    /// A live organization of `tenant`.
    async fn organization(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Uuid,
        id: Uuid,
    ) -> Result<Option<OrganizationRow>>;
    /// The live organizations of `tenant` that are in `roots` or below one of them.
    async fn subtree_ids(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Uuid,
        roots: &[Uuid],
    ) -> Result<Vec<Uuid>>;
    async fn create_tenant(&self, conn: &mut AsyncPgConnection, name: &str) -> Result<Uuid>;
    async fn create_organization(
        &self,
        conn: &mut AsyncPgConnection,
        tenant: Uuid,
        input: CreateOrganization,
    ) -> Result<Uuid>;
}

/// The Postgres implementation.
#[derive(Clone, Copy, Debug, Default)]
pub struct PgDirectory;

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

impl PgDirectory {
    /// Tenants for a super admin, filtered, sorted and paged.
    pub async fn list_tenants_as_superadmin(
        &self,
        conn: &mut AsyncPgConnection,
        q: &TenantListQuery,
        page: stoa_core::Page,
    ) -> Result<(Vec<TenantRow>, i64)> {
        let filtered = || {
            let mut query = tenants::table
                .filter(tenants::deleted_at.is_null())
                .into_boxed();
            if let Some(id) = q.id {
                query = query.filter(tenants::id.eq(id));
            }
            if let Some(search) = q.search.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                query = query.filter(tenants::name.ilike(format!("%{}%", escape_like(search))));
            }
            if let Some(active) = q.is_active {
                query = query.filter(tenants::is_active.eq(active));
            }
            query
        };
        let total: i64 = filtered().count().get_result(conn).await?;
        let desc = q.sort_dir == Some(SortDir::Desc);
        let mut query = filtered().select(TenantRow::as_select());
        query = match (q.sort_field.unwrap_or_default(), desc) {
            (TenantSortField::Name, false) => query.order((tenants::name.asc(), tenants::id.asc())),
            (TenantSortField::Name, true) => query.order((tenants::name.desc(), tenants::id.asc())),
            (TenantSortField::CreatedAt, false) => {
                query.order((tenants::created_at.asc(), tenants::id.asc()))
            }
            (TenantSortField::CreatedAt, true) => {
                query.order((tenants::created_at.desc(), tenants::id.asc()))
            }
            (TenantSortField::UpdatedAt, false) => {
                query.order((tenants::updated_at.asc(), tenants::id.asc()))
            }
            (TenantSortField::UpdatedAt, true) => {
                query.order((tenants::updated_at.desc(), tenants::id.asc()))
            }
        };
        let rows = query
            .limit(page.limit())
            .offset(page.offset())
            .load(conn)
            .await?;
        Ok((rows, total))
    }

    pub async fn create_tenant_with(
        &self,
        conn: &mut AsyncPgConnection,
        input: &CreateTenant,
    ) -> Result<Uuid> {
        Ok(diesel::insert_into(tenants::table)
            .values((
                tenants::name.eq(input.name.trim()),
                tenants::is_active.eq(input.is_active.unwrap_or(true)),
            ))
            .returning(tenants::id)
            .get_result(conn)
            .await?)
    }

    pub async fn update_tenant(
        &self,
        conn: &mut AsyncPgConnection,
        input: &UpdateTenant,
    ) -> Result<()> {
        let current = self
            .tenant(conn, input.id)
            .await?
            .ok_or(DirectoryError::TenantNotFound)?;
        diesel::update(tenants::table.filter(tenants::id.eq(input.id)))
            .set((
                tenants::name.eq(input
                    .name
                    .as_deref()
                    .map(str::trim)
                    .unwrap_or(&current.name)),
                tenants::is_active.eq(input.is_active.unwrap_or(current.is_active)),
            ))
            .execute(conn)
            .await?;
        Ok(())
    }

    pub async fn delete_tenant(&self, conn: &mut AsyncPgConnection, id: Uuid) -> Result<()> {
        let n = diesel::update(
            tenants::table.filter(tenants::id.eq(id).and(tenants::deleted_at.is_null())),
        )
        .set((
            tenants::deleted_at.eq(OffsetDateTime::now_utc()),
            tenants::is_active.eq(false),
        ))
        .execute(conn)
        .await?;
        if n == 0 {
            return Err(DirectoryError::TenantNotFound);
        }
        Ok(())
    }

    /// Tenant names by id, for the super admin's manage view.
    pub async fn tenant_names(
        &self,
        conn: &mut AsyncPgConnection,
    ) -> Result<HashMap<Uuid, String>> {
        Ok(tenants::table
            .filter(tenants::deleted_at.is_null())
            .select((tenants::id, tenants::name))
            .load::<(Uuid, String)>(conn)
            .await?
            .into_iter()
            .collect())
    }

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

    /// Public lookup: a live tenant by id (inactive tenants still resolve).
    pub async fn lookup_tenant(
        &self,
        conn: &mut AsyncPgConnection,
        id: Uuid,
    ) -> Result<Option<TenantRow>> {
        self.tenant(conn, id).await
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
}

/// Makes `children` direct children of `parent` (all must be live in the tenant,
/// none may be the parent or one of its ancestors).
async fn assign_children(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    parent: Uuid,
    children: &[Uuid],
) -> Result<()> {
    if children.is_empty() {
        return Ok(());
    }
    if children.contains(&parent) {
        return Err(DirectoryError::InvalidChild);
    }
    let parent_ancestors: Vec<Uuid> = organizations::table
        .filter(organizations::id.eq(parent))
        .select(organizations::ancestor_ids)
        .first(conn)
        .await?;
    if children.iter().any(|c| parent_ancestors.contains(c)) {
        return Err(DirectoryError::InvalidChild);
    }
    let wanted: HashSet<Uuid> = children.iter().copied().collect();
    let n = diesel::update(
        organizations::table
            .filter(organizations::tenant_id.eq(tenant))
            .filter(organizations::deleted_at.is_null())
            .filter(organizations::id.eq_any(&wanted.iter().copied().collect::<Vec<_>>())),
    )
    .set(organizations::parent_id.eq(parent))
    .execute(conn)
    .await?;
    if n != wanted.len() {
        return Err(DirectoryError::InvalidChild);
    }
    Ok(())
}

/// Recomputes `root_id`, `depth` and `ancestor_ids` for the tenant's live
/// organizations from their `parent_id`s, writing only rows that changed. A
/// missing parent or a cycle makes a node a root.
/// `(id, parent_id, root_id, depth, ancestor_ids)` of one organization.
type TreeRow = (Uuid, Option<Uuid>, Uuid, i32, Vec<Uuid>);

pub async fn rebuild_tree(conn: &mut AsyncPgConnection, tenant: Uuid) -> Result<()> {
    let rows: Vec<TreeRow> = organizations::table
        .filter(organizations::tenant_id.eq(tenant))
        .filter(organizations::deleted_at.is_null())
        .select((
            organizations::id,
            organizations::parent_id,
            organizations::root_id,
            organizations::depth,
            organizations::ancestor_ids,
        ))
        .load(conn)
        .await?;
    let parents: HashMap<Uuid, Option<Uuid>> = rows.iter().map(|r| (r.0, r.1)).collect();
    for (id, parent, root, depth, ancestors) in &rows {
        let path = ancestor_path(*id, &parents);
        let new_root = <[Uuid]>::first(&path).copied().unwrap_or(*id);
        let new_parent = <[Uuid]>::last(&path).copied();
        if path != *ancestors
            || new_root != *root
            || path.len() as i32 != *depth
            || new_parent != *parent
        {
            diesel::update(organizations::table.filter(organizations::id.eq(id)))
                .set((
                    organizations::ancestor_ids.eq(&path),
                    organizations::root_id.eq(new_root),
                    organizations::depth.eq(path.len() as i32),
                    organizations::parent_id.eq(new_parent),
                ))
                .execute(conn)
                .await?;
        }
    }
    Ok(())
}

/// Ancestors of `id` from the root down to its parent; empty when the parent
/// is missing or the chain loops.
fn ancestor_path(id: Uuid, parents: &HashMap<Uuid, Option<Uuid>>) -> Vec<Uuid> {
    let mut path = Vec::new();
    let mut seen = HashSet::from([id]);
    let mut current = parents.get(&id).copied().flatten();
    while let Some(p) = current {
        if !parents.contains_key(&p) || !seen.insert(p) {
            return Vec::new();
        }
        path.push(p);
        current = parents.get(&p).copied().flatten();
    }
    path.reverse();
    path
}

/// A slug from a name: lower-case ASCII letters and digits, other runs become `-`.
pub fn slugify(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    let out: String = out.chars().take(140).collect();
    if out.is_empty() {
        "organization".into()
    } else {
        out
    }
}

/// `base`, or `base-1`, `base-2`, ... whichever is free in the tenant.
async fn unique_slug(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    base: &str,
    except: Option<Uuid>,
) -> Result<String> {
    let taken: HashSet<String> = organizations::table
        .filter(organizations::tenant_id.eq(tenant))
        .filter(organizations::deleted_at.is_null())
        .filter(organizations::id.ne(except.unwrap_or(Uuid::nil())))
        .filter(
            organizations::slug
                .eq(base)
                .or(organizations::slug.like(format!("{}-%", escape_like(base)))),
        )
        .select(organizations::slug)
        .load::<Option<String>>(conn)
        .await?
        .into_iter()
        .flatten()
        .collect();
    if !taken.contains(base) {
        return Ok(base.to_string());
    }
    Ok((1..)
        .map(|n| format!("{base}-{n}"))
        .find(|s| !taken.contains(s))
        .unwrap_or_else(|| format!("{base}-{}", Uuid::new_v4().simple())))
}

/// Moved to `stoa_core::search` (kept here for existing imports).
pub use stoa_core::search::escape_like;

impl PgDirectory {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slugify("Acme Corp"), "acme-corp");
        assert_eq!(slugify("  ÄÖ  "), "organization");
        assert_eq!(slugify("R&D / Lab 2"), "r-d-lab-2");
    }

    #[test]
    fn paths_survive_cycles_and_orphans() {
        let (a, b, c, d) = (
            Uuid::from_u128(1),
            Uuid::from_u128(2),
            Uuid::from_u128(3),
            Uuid::from_u128(4),
        );
        let parents = HashMap::from([
            (a, None),
            (b, Some(a)),
            (c, Some(b)),
            (d, Some(Uuid::from_u128(9))),
        ]);
        assert_eq!(ancestor_path(c, &parents), vec![a, b]);
        assert_eq!(ancestor_path(a, &parents), Vec::<Uuid>::new());
        assert_eq!(ancestor_path(d, &parents), Vec::<Uuid>::new());
        let looped = HashMap::from([(a, Some(b)), (b, Some(a))]);
        assert_eq!(ancestor_path(a, &looped), Vec::<Uuid>::new());
    }
}
