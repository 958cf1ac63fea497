//! Effective ACL resolution, as the reference does it:
//! 1. super admin = any user ACL or any ACL of the user's roles with the flag;
//! 2. a user ACL for (user, tenant) replaces the role ACLs;
//! 3. otherwise the union of the role ACLs in the tenant (features, flag,
//!    organizations: any unrestricted ACL makes the union unrestricted);
//! 4. organization restrictions expand to the listed organizations' subtrees;
//!    an empty restriction falls back to the home organization's subtree.
//!
//! Then the caller's selection (`om_selected_org` / `om_selected_tenant` or the
//! headers) picks the organization to act in; a selection outside the allowed
//! set is refused (422), never silently widened.
//!
//! API keys resolve through [`resolve_key`] (`key.rs`): their roles' ACLs,
//! bounded by what the key's creator holds now, with the same
//! organization-scope rules.

use std::collections::BTreeSet;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::{ALL_ORGANIZATIONS, ResolvedAcl};
use stoa_core::AppError;
use stoa_directory::{DirectoryService, PgDirectory};
use uuid::Uuid;

use crate::error::AuthError;
use crate::schema::{role_acls, roles, user_acls, user_roles};

mod key;

pub use key::{intersect_features, resolve_key};

pub use crate::error::SELECTION_INVALID;

pub use stoa_acl::accounts::{KeySubject, Resolved, Selection, Subject};

fn selection_invalid(message: &'static str, from_cookie: bool) -> AppError {
    AuthError::SelectionInvalid {
        message,
        from_cookie,
    }
    .into()
}

/// Whether the user is a super admin anywhere (user ACL or role ACL flag).
pub(crate) async fn is_super_admin(
    conn: &mut AsyncPgConnection,
    user: Uuid,
    role_ids: &[Uuid],
) -> Result<bool, AppError> {
    let by_user: i64 = user_acls::table
        .filter(user_acls::user_id.eq(user))
        .filter(user_acls::is_super_admin.eq(true))
        .count()
        .get_result(conn)
        .await?;
    if by_user > 0 {
        return Ok(true);
    }
    any_super_admin_role(conn, role_ids).await
}

/// Whether any ACL of the roles carries the super-admin flag.
pub(crate) async fn any_super_admin_role(
    conn: &mut AsyncPgConnection,
    role_ids: &[Uuid],
) -> Result<bool, AppError> {
    let by_role: i64 = role_acls::table
        .filter(role_acls::role_id.eq_any(role_ids))
        .filter(role_acls::is_super_admin.eq(true))
        .count()
        .get_result(conn)
        .await?;
    Ok(by_role > 0)
}

/// Resolves the grants and organization scope of `subject` for `selection`.
pub async fn resolve(
    conn: &mut AsyncPgConnection,
    subject: Subject,
    selection: &Selection,
) -> Result<Resolved, AppError> {
    let memberships: Vec<(Uuid, String, Uuid)> = user_roles::table
        .inner_join(roles::table)
        .filter(user_roles::user_id.eq(subject.user_id))
        .filter(roles::deleted_at.is_null())
        .select((roles::id, roles::name, roles::tenant_id))
        .order(roles::name.asc())
        .load(conn)
        .await?;
    let role_ids: Vec<Uuid> = memberships.iter().map(|m| m.0).collect();
    let super_admin = is_super_admin(conn, subject.user_id, &role_ids).await?;

    let tenant = selected_tenant(conn, subject.tenant_id, super_admin, selection).await?;
    let Some(tenant_id) = tenant else {
        return Ok(Resolved {
            tenant_id: None,
            acl: std::sync::Arc::new(ResolvedAcl {
                is_super_admin: super_admin,
                features: if super_admin {
                    vec!["*".into()]
                } else {
                    vec![]
                },
                ..Default::default()
            }),
        });
    };
    let role_names: Vec<String> = memberships
        .iter()
        .filter(|m| m.2 == tenant_id)
        .map(|m| m.1.clone())
        .collect();
    let tenant_role_ids: Vec<Uuid> = memberships
        .iter()
        .filter(|m| m.2 == tenant_id)
        .map(|m| m.0)
        .collect();

    let user_acl: Option<(Vec<String>, bool, Option<Vec<Uuid>>)> = user_acls::table
        .filter(user_acls::user_id.eq(subject.user_id))
        .filter(user_acls::tenant_id.eq(tenant_id))
        .select((
            user_acls::features,
            user_acls::is_super_admin,
            user_acls::organizations,
        ))
        .first(conn)
        .await
        .optional()?;
    let (features, restriction): (Vec<String>, Option<Vec<Uuid>>) = match user_acl {
        Some((features, _, orgs)) => (features, orgs),
        None => {
            let rows: Vec<(Vec<String>, Option<Vec<Uuid>>)> = role_acls::table
                .filter(role_acls::role_id.eq_any(&tenant_role_ids))
                .filter(role_acls::tenant_id.eq(tenant_id))
                .select((role_acls::features, role_acls::organizations))
                .load(conn)
                .await?;
            let mut features = Vec::new();
            let mut orgs: Option<BTreeSet<Uuid>> = Some(BTreeSet::new());
            for (f, o) in rows {
                for feature in f {
                    if !features.contains(&feature) {
                        features.push(feature);
                    }
                }
                match (o, orgs.as_mut()) {
                    (None, _) => orgs = None,
                    (Some(list), Some(set)) => set.extend(list),
                    (Some(_), None) => {}
                }
            }
            (features, orgs.map(|s| s.into_iter().collect()))
        }
    };

    let home = subject
        .home_organization_id
        .filter(|_| Some(tenant_id) == subject.tenant_id);
    let allowed = allowed_organizations(conn, tenant_id, super_admin, restriction, home).await?;
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

/// The resolution of a scope: super admins hold `*`, everyone else `features`.
fn resolved(
    tenant_id: Uuid,
    super_admin: bool,
    features: Vec<String>,
    roles: Vec<String>,
    allowed: Option<Vec<Uuid>>,
    (selected, visible): (Option<Uuid>, Option<Vec<Uuid>>),
) -> Resolved {
    Resolved {
        tenant_id: Some(tenant_id),
        acl: std::sync::Arc::new(ResolvedAcl {
            is_super_admin: super_admin,
            features: if super_admin {
                vec!["*".into()]
            } else {
                features
            },
            roles,
            allowed_organization_ids: allowed,
            selected_organization_id: selected,
            visible_organization_ids: visible,
        }),
    }
}

/// The tenant a request acts in: a super admin's (valid) selection, else `default`.
async fn selected_tenant(
    conn: &mut AsyncPgConnection,
    default: Option<Uuid>,
    super_admin: bool,
    selection: &Selection,
) -> Result<Option<Uuid>, AppError> {
    // Only super admins may act in another tenant.
    let Some(raw) = selection.tenant.as_deref().filter(|_| super_admin) else {
        return Ok(default);
    };
    let id: Uuid = raw
        .parse()
        .map_err(|_| selection_invalid("Your selected tenant is not available.", false))?;
    if PgDirectory.tenant(conn, id).await?.is_none() {
        return Err(selection_invalid(
            "Your selected tenant is not available.",
            false,
        ));
    }
    Ok(Some(id))
}

/// The organizations a caller may act in (`None` = all of the tenant): the
/// restriction's subtrees; an empty restriction falls back to the home
/// organization's subtree.
async fn allowed_organizations(
    conn: &mut AsyncPgConnection,
    tenant_id: Uuid,
    super_admin: bool,
    restriction: Option<Vec<Uuid>>,
    home: Option<Uuid>,
) -> Result<Option<Vec<Uuid>>, AppError> {
    Ok(if super_admin {
        None
    } else {
        match restriction {
            None => None,
            Some(list) if list.is_empty() => match home {
                Some(home) => Some(PgDirectory.subtree_ids(conn, tenant_id, &[home]).await?),
                None => Some(Vec::new()),
            },
            Some(list) => Some(PgDirectory.subtree_ids(conn, tenant_id, &list).await?),
        }
    })
}

/// Applies the selection: the organization writes go to and the organizations
/// reads are filtered to. A selection outside `allowed` is refused (422).
async fn organization_scope(
    conn: &mut AsyncPgConnection,
    tenant_id: Uuid,
    super_admin: bool,
    allowed: &Option<Vec<Uuid>>,
    home: Option<Uuid>,
    selection: &Selection,
) -> Result<(Option<Uuid>, Option<Vec<Uuid>>), AppError> {
    let from_cookie = selection.organization_from_cookie;
    Ok(match selection.organization.as_deref().map(str::trim) {
        Some(ALL_ORGANIZATIONS) => (None, allowed.clone()),
        Some(raw) if !raw.is_empty() => {
            let id: Uuid = raw.parse().map_err(|_| {
                selection_invalid(
                    "Your selected organization is no longer available.",
                    from_cookie,
                )
            })?;
            let exists = PgDirectory
                .organization(conn, tenant_id, id)
                .await?
                .is_some();
            let permitted = allowed.as_ref().is_none_or(|a| a.contains(&id));
            if !exists || !permitted {
                return Err(selection_invalid(
                    "Your selected organization is no longer available.",
                    from_cookie,
                ));
            }
            (
                Some(id),
                Some(PgDirectory.subtree_ids(conn, tenant_id, &[id]).await?),
            )
        }
        _ if super_admin => (None, None),
        _ => match home.filter(|h| allowed.as_ref().is_none_or(|a| a.contains(h))) {
            Some(home) => (
                Some(home),
                Some(PgDirectory.subtree_ids(conn, tenant_id, &[home]).await?),
            ),
            None => (None, allowed.clone()),
        },
    })
}
