//! `GET /directory/organizations`: the `options`, `tree` and `manage` views.

use std::collections::HashMap;

use actix_web::{HttpResponse, get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::pagination::total_pages;
use stoa_core::{AppError, AppResult, PageQuery, Query};
use uuid::Uuid;

use super::VIEW;
use crate::dto::*;
use crate::model::OrganizationRow;
use crate::service::PgDirectory;

/// The tenant a request names, checked against the caller: `Ok(None)` means
/// "every tenant" (super admins only, `tenantId=all`).
fn target_tenant(ctx: &AuthContext, raw: Option<&str>) -> AppResult<Option<Uuid>> {
    match raw.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(ctx.tenant_id),
        Some("all") if ctx.is_super_admin() => Ok(None),
        Some(raw) => {
            let id: Uuid = raw.parse().map_err(|_| {
                AppError::bad_request("Invalid query parameters: tenantId: must be a uuid")
            })?;
            ctx.target_tenant(id).map(Some)
        }
    }
}

/// The tenant's organizations arranged as a forest (children sorted by name).
struct Forest<'a> {
    by_id: HashMap<Uuid, &'a OrganizationRow>,
    children: HashMap<Uuid, Vec<Uuid>>,
    roots: Vec<Uuid>,
}

impl<'a> Forest<'a> {
    fn new(rows: &'a [OrganizationRow]) -> Self {
        let by_id: HashMap<Uuid, &OrganizationRow> = rows.iter().map(|r| (r.id, r)).collect();
        let mut children: HashMap<Uuid, Vec<Uuid>> = HashMap::new();
        let mut roots = Vec::new();
        // Rows arrive sorted by name, so every child list is too.
        for row in rows {
            match row.parent_id.filter(|p| by_id.contains_key(p)) {
                Some(parent) => children.entry(parent).or_default().push(row.id),
                None => roots.push(row.id),
            }
        }
        Self {
            by_id,
            children,
            roots,
        }
    }

    fn child_ids(&self, id: Uuid) -> Vec<Uuid> {
        self.children.get(&id).cloned().unwrap_or_default()
    }

    fn descendant_ids(&self, id: Uuid) -> Vec<Uuid> {
        let mut out = Vec::new();
        let mut stack = self.child_ids(id);
        stack.reverse();
        while let Some(next) = stack.pop() {
            out.push(next);
            let mut kids = self.child_ids(next);
            kids.reverse();
            stack.extend(kids);
        }
        out
    }

    fn path_label(&self, row: &OrganizationRow) -> String {
        let mut names: Vec<&str> = row
            .ancestor_ids
            .iter()
            .filter_map(|a| self.by_id.get(a).map(|r| r.name.as_str()))
            .collect();
        names.push(&row.name);
        names.join(" / ")
    }

    fn node(&self, id: Uuid) -> Option<OrganizationNode> {
        let row = self.by_id.get(&id)?;
        let child_ids = self.child_ids(id);
        Some(OrganizationNode {
            id,
            name: row.name.clone(),
            parent_id: row.parent_id,
            tenant_id: row.tenant_id,
            depth: row.depth,
            ancestor_ids: row.ancestor_ids.clone(),
            descendant_ids: self.descendant_ids(id),
            is_active: row.is_active,
            tree_path: row.tree_path(),
            path_label: self.path_label(row),
            children: child_ids.iter().filter_map(|c| self.node(*c)).collect(),
            child_ids,
        })
    }

    /// Every organization in pre-order (parents before their children).
    fn pre_order(&self) -> Vec<Uuid> {
        let mut out = Vec::with_capacity(self.by_id.len());
        for root in &self.roots {
            out.push(*root);
            out.extend(self.descendant_ids(*root));
        }
        out
    }
}

/// Lists organizations as `options` (flat, by name), `tree` (nested) or `manage`
/// (paged pre-order list with hierarchy details).
#[utoipa::path(
    tag = "Directory",
    params(OrganizationListQuery),
    responses(
        (status = 200, body = OrganizationList),
    )
)]
#[get("/directory/organizations")]
pub async fn list_organizations(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<OrganizationListQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let view = q.view.unwrap_or_default();
    let tenant = target_tenant(&ctx, q.tenant_id.as_deref())?;
    if tenant.is_none() && (view != OrganizationView::Manage || !ctx.is_super_admin()) {
        return Ok(HttpResponse::BadRequest()
            .json(serde_json::json!({"items": [], "error": "Tenant scope required"})));
    }
    let ids: Option<Vec<Uuid>> = match q.ids.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(raw) => Some(
            raw.split(',')
                .map(|s| s.trim().parse::<Uuid>())
                .collect::<Result<_, _>>()
                .map_err(|_| {
                    AppError::bad_request(
                        "Invalid query parameters: ids: must be comma-separated uuids",
                    )
                })?,
        ),
    };
    let mut conn = db.conn().await?;
    // The super admin's `manage` view names each organization's tenant, in
    // the same statement.
    let with_tenant_names = view == OrganizationView::Manage && ctx.is_super_admin();
    let (mut rows, tenant_names): (Vec<OrganizationRow>, HashMap<Uuid, String>) =
        if with_tenant_names {
            let named = PgDirectory
                .organizations_with_tenant_names(&mut conn, tenant)
                .await?;
            let names = named
                .iter()
                .filter_map(|(row, name)| name.clone().map(|n| (row.tenant_id, n)))
                .collect();
            (named.into_iter().map(|(row, _)| row).collect(), names)
        } else {
            (
                PgDirectory.organizations(&mut conn, tenant).await?,
                HashMap::new(),
            )
        };
    // Organization-restricted callers see only their allowed subtrees.
    if !ctx.is_super_admin()
        && let Some(allowed) = &ctx.acl.allowed_organization_ids
    {
        rows.retain(|r| allowed.contains(&r.id));
    }
    let status = q.status.unwrap_or_default();
    let keep = |row: &OrganizationRow| match status {
        StatusFilter::All => true,
        StatusFilter::Active => row.is_active,
        StatusFilter::Inactive => !row.is_active,
    };
    let forest = Forest::new(&rows);
    let body = match view {
        OrganizationView::Options => OrganizationList::Options {
            items: rows
                .iter()
                .filter(|r| keep(r) && ids.as_ref().is_none_or(|ids| ids.contains(&r.id)))
                .map(|r| OrganizationOption {
                    id: r.id,
                    name: r.name.clone(),
                    logo_url: r.logo_url.clone(),
                    logo_preserve_aspect_ratio: r.logo_preserve_aspect_ratio,
                    parent_id: r.parent_id,
                    tenant_id: r.tenant_id,
                    is_active: r.is_active,
                    depth: r.depth,
                    tree_path: r.tree_path(),
                })
                .collect(),
        },
        OrganizationView::Tree => OrganizationList::Tree {
            items: forest
                .roots
                .iter()
                .filter_map(|id| forest.node(*id))
                .collect(),
        },
        OrganizationView::Manage => {
            let page = PageQuery {
                page: q.page,
                page_size: q.page_size,
            }
            .resolve(50, 100)?;
            let search = q
                .search
                .as_deref()
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty());
            let mut items: Vec<OrganizationManageItem> = forest
                .pre_order()
                .into_iter()
                .filter_map(|id| forest.by_id.get(&id).copied())
                .filter(|r| keep(r) && ids.as_ref().is_none_or(|ids| ids.contains(&r.id)))
                .map(|r| {
                    let child_ids = forest.child_ids(r.id);
                    let descendant_ids = forest.descendant_ids(r.id);
                    OrganizationManageItem {
                        id: r.id,
                        name: r.name.clone(),
                        slug: r.slug.clone(),
                        logo_url: r.logo_url.clone(),
                        logo_preserve_aspect_ratio: r.logo_preserve_aspect_ratio,
                        updated_at: r.updated_at,
                        tenant_id: r.tenant_id,
                        tenant_name: tenant_names.get(&r.tenant_id).cloned(),
                        parent_id: r.parent_id,
                        parent_name: r
                            .parent_id
                            .and_then(|p| forest.by_id.get(&p))
                            .map(|p| p.name.clone()),
                        depth: r.depth,
                        root_id: r.root_id,
                        tree_path: r.tree_path(),
                        path_label: forest.path_label(r),
                        ancestor_ids: r.ancestor_ids.clone(),
                        children_count: child_ids.len(),
                        descendants_count: descendant_ids.len(),
                        child_ids,
                        descendant_ids,
                        is_active: r.is_active,
                    }
                })
                .filter(|item| {
                    search.as_ref().is_none_or(|s| {
                        item.name.to_lowercase().contains(s)
                            || item.path_label.to_lowercase().contains(s)
                    })
                })
                .collect();
            if tenant.is_none() {
                items.sort_by(|a, b| {
                    (a.tenant_name.as_deref(), &a.path_label)
                        .cmp(&(b.tenant_name.as_deref(), &b.path_label))
                });
            }
            let total = items.len() as u64;
            let start = usize::try_from(page.offset())
                .unwrap_or(usize::MAX)
                .min(items.len());
            let end = start
                .saturating_add(page.page_size as usize)
                .min(items.len());
            OrganizationList::Manage {
                items: items.drain(start..end).collect(),
                total,
                page: page.page,
                page_size: page.page_size,
                total_pages: total_pages(total, page.page_size),
                is_super_admin: ctx.is_super_admin(),
            }
        }
    };
    Ok(HttpResponse::Ok().json(body))
}
