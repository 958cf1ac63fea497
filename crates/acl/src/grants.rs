//! The grant boundary: nobody hands out more than they hold.
//!
//! Used by every write that gives access to someone — role and user ACL edits,
//! role assignments on users, API keys. A super admin may grant anything; any
//! other caller may grant only features its own grants cover, never `*`, never
//! the super-admin flag, and (when it is restricted to some organizations) only
//! organizations inside its own allowed set. These checks need no database;
//! the roles they check come from a [`crate::accounts::RoleDirectory`].

use actix_web::http::StatusCode;
use stoa_core::AppError;
use uuid::Uuid;

use crate::{AuthContext, feature_granted};

fn refuse(message: String) -> AppError {
    AppError::new(StatusCode::FORBIDDEN, message).with_code("grant_not_allowed")
}

/// Whether `caller`'s own grants cover `grant` (a feature id or a wildcard).
/// A wildcard `m.*` is covered by `*`, by `m.*` itself or by a wider `p.*`.
pub fn holds(caller: &AuthContext, grant: &str) -> bool {
    if caller.is_super_admin() {
        return true;
    }
    if grant == "*" {
        return false;
    }
    feature_granted(&caller.acl.features, grant, false)
}

/// 403 unless `caller` may grant `features` and (when `super_admin`) the
/// super-admin flag.
pub fn check_features<S: AsRef<str>>(
    caller: &AuthContext,
    features: &[S],
    super_admin: bool,
) -> Result<(), AppError> {
    if caller.is_super_admin() {
        return Ok(());
    }
    if super_admin {
        return Err(refuse(
            "Only super administrators can grant super administrator access.".into(),
        ));
    }
    for feature in features {
        let feature = feature.as_ref();
        if !holds(caller, feature) {
            return Err(refuse(format!("Cannot grant feature {feature}.")));
        }
    }
    Ok(())
}

/// A role with what it grants in its tenant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleGrant {
    pub id: Uuid,
    pub name: String,
    pub tenant_id: Uuid,
    pub features: Vec<String>,
    pub is_super_admin: bool,
    /// The organizations the role's ACL reaches (`None` = every one).
    pub organizations: Option<Vec<Uuid>>,
}

/// 403 unless `caller` holds everything each role grants (and is a super admin
/// when a role carries the super-admin flag), and, for a caller restricted to
/// some organizations, the role reaches only organizations inside the
/// caller's (a role granting nothing reaches nothing).
pub fn check_roles(caller: &AuthContext, roles: &[RoleGrant]) -> Result<(), AppError> {
    if caller.is_super_admin() {
        return Ok(());
    }
    for role in roles {
        if role.is_super_admin {
            return Err(refuse(format!(
                "Cannot grant role {}: it carries super administrator access.",
                role.name
            )));
        }
        if let Some(feature) = role.features.iter().find(|f| !holds(caller, f)) {
            return Err(refuse(format!(
                "Cannot grant role {}: it grants feature {feature}, which you do not hold.",
                role.name
            )));
        }
        if !role.features.is_empty() && !caller.covers_organizations(role.organizations.as_deref())
        {
            return Err(crate::out_of_scope(format!(
                "Cannot grant role {}: it reaches organizations outside yours.",
                role.name
            )));
        }
    }
    Ok(())
}

/// 403 unless `caller` may write what belongs to `roles` (their navigation,
/// their dashboard widgets): [`check_roles`], and for a caller restricted to
/// some organizations every role must be of its organizations — an ACL that
/// lists organizations, all inside the caller's. A role reaching every
/// organization (or `[]`, each holder's home, which this check cannot see)
/// is a tenant-wide record, read-only to a restricted caller
/// ([`AuthContext::require_writable`], 403 `organization_out_of_scope`),
/// whether or not it grants anything yet. *Why:* "a role granting nothing
/// reaches nothing" let an admin of one branch relabel the navigation and
/// the widgets of a role the tenant's administrator had made for everyone.
pub fn check_role_records(caller: &AuthContext, roles: &[RoleGrant]) -> Result<(), AppError> {
    check_roles(caller, roles)?;
    if caller.organization_restriction().is_none() {
        return Ok(());
    }
    for role in roles {
        let listed = role
            .organizations
            .as_deref()
            .filter(|list| !list.is_empty());
        if !listed.is_some_and(|list| caller.covers_organizations(Some(list))) {
            caller.require_writable(Some(role.tenant_id), None, || {
                AppError::not_found("Role not found")
            })?;
        }
    }
    Ok(())
}

/// Why a role reference (id or name) did not resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoleLookupError {
    /// Neither an id nor a name of a live role.
    NotFound(Vec<String>),
    /// An id of a role in another tenant.
    ForeignTenant(String),
}

#[cfg(test)]
mod tests {
    use crate::ResolvedAcl;

    use super::*;

    fn caller(features: &[&str], orgs: Option<Vec<Uuid>>) -> AuthContext {
        AuthContext::for_user(Uuid::nil(), None, Uuid::nil()).with_acl(ResolvedAcl {
            features: features.iter().map(|s| s.to_string()).collect(),
            allowed_organization_ids: orgs,
            ..Default::default()
        })
    }

    #[test]
    fn features_within_own_grants_only() {
        let admin = caller(&["auth.*", "devices.view"], None);
        assert!(check_features(&admin, &["auth.users.list", "auth.*"], false).is_ok());
        assert!(check_features(&admin, &["devices.view"], false).is_ok());
        let err = check_features(&admin, &["devices.manage"], false).unwrap_err();
        assert_eq!(err.status(), StatusCode::FORBIDDEN);
        assert_eq!(err.message(), "Cannot grant feature devices.manage.");
        assert!(check_features(&admin, &["*"], false).is_err());
        assert!(check_features(&admin, &["devices.*"], false).is_err());
        assert!(check_features::<&str>(&admin, &[], true).is_err());
    }

    #[test]
    fn roles_within_own_organizations() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let restricted = caller(&["auth.*"], Some(vec![a]));
        let role = |organizations: Option<Vec<Uuid>>, features: &[&str]| RoleGrant {
            id: Uuid::nil(),
            name: "r".into(),
            tenant_id: Uuid::nil(),
            features: features.iter().map(|s| s.to_string()).collect(),
            is_super_admin: false,
            organizations,
        };
        let list = &["auth.users.list"];
        assert!(check_roles(&restricted, &[role(Some(vec![a]), list)]).is_ok());
        assert!(check_roles(&restricted, &[role(Some(vec![a, b]), list)]).is_err());
        assert!(check_roles(&restricted, &[role(None, list)]).is_err());
        assert!(check_roles(&restricted, &[role(None, &[])]).is_ok());
        let open = caller(&["auth.*"], None);
        assert!(check_roles(&open, &[role(None, list)]).is_ok());
    }

    #[test]
    fn restricted_callers_write_only_their_organizations_roles_records() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let restricted = caller(&["auth.*"], Some(vec![a]));
        let role = |organizations: Option<Vec<Uuid>>| RoleGrant {
            id: Uuid::nil(),
            name: "r".into(),
            tenant_id: Uuid::nil(),
            features: Vec::new(),
            is_super_admin: false,
            organizations,
        };
        assert!(check_role_records(&restricted, &[role(Some(vec![a]))]).is_ok());
        for tenant_wide in [None, Some(vec![]), Some(vec![a, b])] {
            let err = check_role_records(&restricted, &[role(tenant_wide.clone())]).unwrap_err();
            assert_eq!(err.status(), StatusCode::FORBIDDEN, "{tenant_wide:?}");
        }
        let open = caller(&["auth.*"], None);
        assert!(check_role_records(&open, &[role(None)]).is_ok());
    }

    #[test]
    fn roles_within_own_grants() {
        let admin = caller(&["auth.*"], None);
        let role = |features: &[&str], sa: bool| RoleGrant {
            id: Uuid::nil(),
            name: "r".into(),
            tenant_id: Uuid::nil(),
            features: features.iter().map(|s| s.to_string()).collect(),
            is_super_admin: sa,
            organizations: None,
        };
        assert!(check_roles(&admin, &[role(&["auth.users.list"], false)]).is_ok());
        assert!(check_roles(&admin, &[role(&["devices.view"], false)]).is_err());
        assert!(check_roles(&admin, &[role(&[], true)]).is_err());
    }
}
