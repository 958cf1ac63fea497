//! API keys' effective ACL: their roles' grants bounded by the creator's.

use std::collections::BTreeSet;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::AppError;
use uuid::Uuid;

use super::{
    KeySubject, Resolved, Selection, allowed_organizations, any_super_admin_role,
    organization_scope, resolved, selected_tenant,
};
use crate::schema::{role_acls, roles};

pub use stoa_acl::delegation::intersect_features;

/// Resolves an API key's grants, as the reference's "ACL for a key" does: the
/// union of its live roles' ACLs in the tenant (keys have no user ACL); super
/// admin when one of those roles carries the flag. Organizations start from
/// the key's organization (none = unrestricted); a role ACL without a
/// restriction lifts it, the others add their organizations.
///
/// `ceiling` is what the key's creator holds now: features are intersected
/// with it, the super-admin flag needs both, organizations stay inside the
/// creator's allowed set, and a creator of another tenant holds nothing here.
/// `None` (or a super-admin ceiling) imposes no bound.
///
/// The selection is then applied as for users, the key's organization acting
/// as the home organization.
pub async fn resolve_key(
    conn: &mut AsyncPgConnection,
    subject: KeySubject<'_>,
    ceiling: Option<&Resolved>,
    selection: &Selection,
) -> Result<Resolved, AppError> {
    let ceiling = ceiling.filter(|c| !c.acl.is_super_admin);
    let live_roles: Vec<(Uuid, String, Uuid)> = if subject.role_ids.is_empty() {
        Vec::new()
    } else {
        roles::table
            .filter(roles::id.eq_any(subject.role_ids))
            .filter(roles::deleted_at.is_null())
            .select((roles::id, roles::name, roles::tenant_id))
            .order(roles::name.asc())
            .load(conn)
            .await?
    };
    let live_ids: Vec<Uuid> = live_roles.iter().map(|r| r.0).collect();
    let super_admin =
        ceiling.is_none() && !live_ids.is_empty() && any_super_admin_role(conn, &live_ids).await?;
    let tenant_id = selected_tenant(conn, Some(subject.tenant_id), super_admin, selection)
        .await?
        .unwrap_or(subject.tenant_id);
    let in_tenant: Vec<&(Uuid, String, Uuid)> =
        live_roles.iter().filter(|r| r.2 == tenant_id).collect();
    let role_names: Vec<String> = in_tenant.iter().map(|r| r.1.clone()).collect();
    let tenant_role_ids: Vec<Uuid> = in_tenant.iter().map(|r| r.0).collect();
    let rows: Vec<(Vec<String>, Option<Vec<Uuid>>)> = if tenant_role_ids.is_empty() {
        Vec::new()
    } else {
        role_acls::table
            .filter(role_acls::role_id.eq_any(&tenant_role_ids))
            .filter(role_acls::tenant_id.eq(tenant_id))
            .select((role_acls::features, role_acls::organizations))
            .load(conn)
            .await?
    };
    let home = subject
        .organization_id
        .filter(|_| tenant_id == subject.tenant_id);
    let mut features: Vec<String> = Vec::new();
    let mut restriction: Option<BTreeSet<Uuid>> = home.map(|o| BTreeSet::from([o]));
    for (f, o) in rows {
        for feature in f {
            if !features.contains(&feature) {
                features.push(feature);
            }
        }
        match (o, restriction.as_mut()) {
            (None, _) => restriction = None,
            (Some(list), Some(set)) => set.extend(list),
            (Some(_), None) => {}
        }
    }
    let restriction = restriction.map(|s| s.into_iter().collect());
    let mut allowed =
        allowed_organizations(conn, tenant_id, super_admin, restriction, home).await?;
    if let Some(ceiling) = ceiling {
        if ceiling.tenant_id == Some(tenant_id) {
            features = intersect_features(&features, &ceiling.acl.features);
            if let Some(limit) = &ceiling.acl.allowed_organization_ids {
                allowed = Some(match allowed {
                    None => limit.clone(),
                    Some(own) => own.into_iter().filter(|o| limit.contains(o)).collect(),
                });
            }
        } else {
            features.clear();
            allowed = Some(Vec::new());
        }
    }
    let (selected, visible) =
        organization_scope(conn, tenant_id, super_admin, &allowed, home, selection).await?;
    Ok(resolved(
        tenant_id,
        super_admin,
        features,
        role_names,
        allowed,
        (selected, visible),
    ))
}
