//! The grant boundary: nobody hands out more than they hold.
//!
//! Used by every write that gives access to someone — role and user ACL edits,
//! role assignments on users, API keys. A super admin may grant anything; any
//! other caller may grant only features its own grants cover, never `*`, never
//! the super-admin flag, and (when it is restricted to some organizations) only
//! organizations inside its own allowed set.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::{AuthContext, feature_granted};
use stoa_core::AppError;
use uuid::Uuid;

use crate::schema::{role_acls, roles};

diesel::define_sql_function! {
    /// SQL `lower(text)`.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

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

/// The live roles `ids` with their ACLs in their own tenant (missing ids are
/// left out).
pub async fn role_grants(
    conn: &mut AsyncPgConnection,
    ids: &[Uuid],
) -> Result<Vec<RoleGrant>, AppError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    type Row = (
        Uuid,
        String,
        Uuid,
        Option<Vec<String>>,
        Option<bool>,
        Option<Vec<Uuid>>,
    );
    let rows: Vec<Row> = roles::table
        .left_join(
            role_acls::table.on(role_acls::role_id
                .eq(roles::id)
                .and(role_acls::tenant_id.eq(roles::tenant_id))),
        )
        .filter(roles::id.eq_any(ids))
        .filter(roles::deleted_at.is_null())
        .select((
            roles::id,
            roles::name,
            roles::tenant_id,
            role_acls::features.nullable(),
            role_acls::is_super_admin.nullable(),
            role_acls::organizations.nullable(),
        ))
        .load(conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(
            |(id, name, tenant_id, features, flag, organizations)| RoleGrant {
                id,
                name,
                tenant_id,
                features: features.unwrap_or_default(),
                is_super_admin: flag.unwrap_or(false),
                organizations,
            },
        )
        .collect())
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
            return Err(stoa_acl::out_of_scope(format!(
                "Cannot grant role {}: it reaches organizations outside yours.",
                role.name
            )));
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

/// Resolves role references — ids or (case-insensitive) names — to live roles
/// of `tenant`, keeping the order given and dropping duplicates.
pub async fn resolve_roles(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    tokens: &[String],
) -> Result<Result<Vec<RoleGrant>, RoleLookupError>, AppError> {
    let tokens: Vec<&str> = tokens
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .collect();
    let ids: Vec<Uuid> = tokens.iter().filter_map(|t| t.parse().ok()).collect();
    let names: Vec<String> = tokens
        .iter()
        .filter(|t| t.parse::<Uuid>().is_err())
        .map(|t| t.to_lowercase())
        .collect();
    let by_id: HashMap<Uuid, RoleGrant> = role_grants(conn, &ids)
        .await?
        .into_iter()
        .map(|r| (r.id, r))
        .collect();
    let named: Vec<Uuid> = if names.is_empty() {
        Vec::new()
    } else {
        roles::table
            .filter(roles::tenant_id.eq(tenant))
            .filter(roles::deleted_at.is_null())
            .filter(lower(roles::name).eq_any(&names))
            .select(roles::id)
            .load(conn)
            .await?
    };
    let by_name: HashMap<String, RoleGrant> = role_grants(conn, &named)
        .await?
        .into_iter()
        .map(|r| (r.name.to_lowercase(), r))
        .collect();
    let mut found: Vec<RoleGrant> = Vec::new();
    let mut missing = Vec::new();
    for token in tokens {
        let role = match token.parse::<Uuid>() {
            Ok(id) => match by_id.get(&id) {
                Some(r) if r.tenant_id != tenant => {
                    return Ok(Err(RoleLookupError::ForeignTenant(r.name.clone())));
                }
                other => other,
            },
            Err(_) => by_name.get(&token.to_lowercase()),
        };
        match role {
            Some(role) if !found.iter().any(|f| f.id == role.id) => found.push(role.clone()),
            Some(_) => {}
            None => missing.push(token.to_string()),
        }
    }
    if missing.is_empty() {
        Ok(Ok(found))
    } else {
        Ok(Err(RoleLookupError::NotFound(missing)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use stoa_acl::{CredentialKind, ResolvedAcl};

    use super::*;

    fn caller(features: &[&str], orgs: Option<Vec<Uuid>>) -> AuthContext {
        AuthContext {
            user_id: Some(Uuid::nil()),
            session_id: None,
            api_key_id: None,
            kind: CredentialKind::Session,
            email: None,
            name: None,
            tenant_id: Some(Uuid::nil()),
            actor_tenant_id: Some(Uuid::nil()),
            home_organization_id: None,
            guards: Default::default(),
            acl: Arc::new(ResolvedAcl {
                features: features.iter().map(|s| s.to_string()).collect(),
                allowed_organization_ids: orgs,
                ..Default::default()
            }),
        }
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
