//! `GET /directory/organization-switcher`: the organizations the caller may
//! switch to, as a tree, and for super admins the tenants.
//!
//! Read from the database on every request (no cache), so an organization or
//! tenant created a moment ago is listed at once. The caller's allowed
//! organizations come from its resolved ACL, whose cache is invalidated by
//! every organization write (the `acl_version` triggers).

use std::collections::{HashMap, HashSet};

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use uuid::Uuid;

use crate::dto::{OrganizationSwitcher, SwitcherNode};
use crate::model::OrganizationRow;
use crate::queries::live_tenants;
use crate::service::PgDirectory;

/// The caller's organization menu: allowed organizations (selectable) under
/// their ancestors (not selectable), the current selection, and for super
/// admins the tenants they can switch to.
#[utoipa::path(
    tag = "Directory",
    responses(
        (status = 200, body = OrganizationSwitcher),
        (status = 422, body = ErrorBody, description = "The selected organization is no longer available (`organization_selection_invalid`)"),
    )
)]
#[get("/directory/organization-switcher")]
pub async fn organization_switcher(
    ctx: AuthContext,
    db: web::Data<Db>,
) -> AppResult<web::Json<OrganizationSwitcher>> {
    let can_manage = ctx.has("directory.organizations.manage");
    let allowed = ctx.acl.allowed_organization_ids.clone();
    let mut conn = db.conn().await?;
    let rows = match ctx.tenant_id {
        Some(tenant) => PgDirectory.organizations(&mut conn, Some(tenant)).await?,
        None => Vec::new(),
    };
    let items = menu(&rows, allowed.as_deref());
    let selectable: HashSet<Uuid> = rows
        .iter()
        .filter(|o| allowed.as_ref().is_none_or(|a| a.contains(&o.id)))
        .map(|o| o.id)
        .collect();
    let selected_id = ctx.organization_id().filter(|id| selectable.contains(id));
    let tenants = if ctx.is_super_admin() {
        Some(live_tenants(&mut conn).await?)
    } else {
        None
    };
    let ids: Vec<String> = selectable.iter().map(Uuid::to_string).collect();
    stoa_core::command::access::record(
        &mut conn,
        &ctx.actor(),
        "directory.organization",
        &ids,
        false,
        &["id", "name", "depth", "selectable"],
        Some(serde_json::json!({
            "resultCount": ids.len(),
            "path": "/api/directory/organization-switcher",
        })),
    )
    .await?;
    Ok(web::Json(OrganizationSwitcher {
        items,
        selected_id,
        can_manage,
        can_view_all_organizations: allowed.is_none(),
        tenant_id: ctx.tenant_id,
        tenants,
        is_super_admin: ctx.is_super_admin(),
    }))
}

/// The menu tree: every allowed organization (`None` = all) plus its
/// ancestors, which are shown but not selectable. `rows` come sorted by name.
fn menu(rows: &[OrganizationRow], allowed: Option<&[Uuid]>) -> Vec<SwitcherNode> {
    let is_allowed = |id: &Uuid| allowed.is_none_or(|a| a.contains(id));
    let mut shown: HashSet<Uuid> = HashSet::new();
    for row in rows.iter().filter(|r| is_allowed(&r.id)) {
        shown.insert(row.id);
        shown.extend(row.ancestor_ids.iter().copied());
    }
    let mut children: HashMap<Option<Uuid>, Vec<&OrganizationRow>> = HashMap::new();
    for row in rows.iter().filter(|r| shown.contains(&r.id)) {
        // A node whose parent is not shown (deleted meanwhile) becomes a root.
        let parent = row.parent_id.filter(|p| shown.contains(p));
        children.entry(parent).or_default().push(row);
    }
    fn build(
        parent: Option<Uuid>,
        children: &HashMap<Option<Uuid>, Vec<&OrganizationRow>>,
        is_allowed: &dyn Fn(&Uuid) -> bool,
        depth: i32,
    ) -> Vec<SwitcherNode> {
        children
            .get(&parent)
            .map(|rows| {
                rows.iter()
                    .map(|row| SwitcherNode {
                        id: row.id,
                        name: row.name.clone(),
                        depth,
                        selectable: is_allowed(&row.id),
                        children: build(Some(row.id), children, is_allowed, depth + 1),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
    build(None, &children, &is_allowed, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::OffsetDateTime;

    fn org(id: u128, name: &str, parent: Option<u128>, ancestors: &[u128]) -> OrganizationRow {
        OrganizationRow {
            id: Uuid::from_u128(id),
            tenant_id: Uuid::nil(),
            name: name.into(),
            slug: None,
            logo_url: None,
            logo_preserve_aspect_ratio: false,
            is_active: true,
            parent_id: parent.map(Uuid::from_u128),
            root_id: Uuid::from_u128(ancestors.first().copied().unwrap_or(id)),
            depth: i32::try_from(ancestors.len()).unwrap_or(0),
            ancestor_ids: ancestors.iter().copied().map(Uuid::from_u128).collect(),
            updated_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn ancestors_are_shown_but_not_selectable_and_siblings_are_hidden() {
        let rows = vec![
            org(1, "Acme", None, &[]),
            org(2, "EMEA", Some(1), &[1]),
            org(3, "Sales", Some(2), &[1, 2]),
            org(4, "US", Some(1), &[1]),
        ];
        let allowed = [Uuid::from_u128(3)];
        let tree = menu(&rows, Some(&allowed));
        assert_eq!(tree.len(), 1);
        assert!(!tree[0].selectable);
        assert_eq!(tree[0].children.len(), 1, "US is not shown");
        let emea = &tree[0].children[0];
        assert_eq!((emea.depth, emea.selectable), (1, false));
        assert_eq!(emea.children[0].id, Uuid::from_u128(3));
        assert!(emea.children[0].selectable);
        assert_eq!(emea.children[0].depth, 2);

        let all = menu(&rows, None);
        assert!(all[0].selectable);
        assert_eq!(all[0].children.len(), 2);
    }
}
