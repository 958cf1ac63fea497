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

use std::collections::BTreeSet;

use actix_web::http::StatusCode;
use actix_web::http::header;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::{ALL_ORGANIZATIONS, ResolvedAcl, SELECTED_ORG_COOKIE};
use stoa_core::AppError;
use stoa_directory::{DirectoryService, PgDirectory};
use uuid::Uuid;

use crate::schema::{role_acls, roles, user_acls, user_roles};

/// The code of a refused selection, as the reference names it.
pub const SELECTION_INVALID: &str = "organization_selection_invalid";

/// What the caller asked to act in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Selection {
    pub tenant: Option<String>,
    pub organization: Option<String>,
    /// The organization came from the cookie (a refusal then clears it).
    pub organization_from_cookie: bool,
}

/// The user facts resolution starts from (read by the per-request session check).
#[derive(Clone, Copy, Debug)]
pub struct Subject {
    pub user_id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub home_organization_id: Option<Uuid>,
}

/// A resolved scope: the tenant the request acts in and the grants there.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub tenant_id: Option<Uuid>,
    pub acl: std::sync::Arc<ResolvedAcl>,
}

fn selection_invalid(message: &'static str, from_cookie: bool) -> AppError {
    let mut err =
        AppError::new(StatusCode::UNPROCESSABLE_ENTITY, message).with_code(SELECTION_INVALID);
    if from_cookie {
        err = err.with_header(
            header::SET_COOKIE,
            format!("{SELECTED_ORG_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax"),
        );
    }
    err
}

/// Whether the user is a super admin anywhere (user ACL or role ACL flag).
async fn is_super_admin(
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

    // Only super admins may act in another tenant.
    let mut tenant = subject.tenant_id;
    if super_admin && let Some(raw) = selection.tenant.as_deref() {
        let id: Uuid = raw
            .parse()
            .map_err(|_| selection_invalid("Your selected tenant is not available.", false))?;
        if PgDirectory.tenant(conn, id).await?.is_none() {
            return Err(selection_invalid(
                "Your selected tenant is not available.",
                false,
            ));
        }
        tenant = Some(id);
    }
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
    let allowed: Option<Vec<Uuid>> = if super_admin {
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
    };

    let from_cookie = selection.organization_from_cookie;
    let (selected, visible) = match selection.organization.as_deref().map(str::trim) {
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
    };

    Ok(Resolved {
        tenant_id: Some(tenant_id),
        acl: std::sync::Arc::new(ResolvedAcl {
            is_super_admin: super_admin,
            features: if super_admin {
                vec!["*".into()]
            } else {
                features
            },
            roles: role_names,
            allowed_organization_ids: allowed,
            selected_organization_id: selected,
            visible_organization_ids: visible,
        }),
    })
}
