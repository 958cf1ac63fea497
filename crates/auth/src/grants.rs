//! The grant boundary: nobody hands out more than they hold.
//!
//! Used by every write that gives access to someone — role and user ACL edits,
//! role assignments on users, API keys. A super admin may grant anything; any
//! other caller may grant only features its own grants cover, never `*`, never
//! the super-admin flag, and (when it is restricted to some organizations) only
//! organizations inside its own allowed set.
//!
//! The checks themselves live in `stoa_acl::grants` (re-exported here); this
//! module looks the roles up (the `RoleDirectory` stoa-auth implements).

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
pub use stoa_acl::grants::{RoleGrant, RoleLookupError, check_features, check_roles, holds};
use stoa_core::AppError;
use uuid::Uuid;

use crate::schema::{role_acls, roles};

diesel::define_sql_function! {
    /// SQL `lower(text)`.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

/// The live roles of `tenant` as `(id, name)` by name then id, all or those
/// among `ids` (`RoleDirectory::tenant_roles`).
pub async fn tenant_roles(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    ids: Option<&[Uuid]>,
) -> diesel::QueryResult<Vec<(Uuid, String)>> {
    let mut query = roles::table
        .filter(roles::tenant_id.eq(tenant))
        .filter(roles::deleted_at.is_null())
        .into_boxed();
    if let Some(ids) = ids {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        query = query.filter(roles::id.eq_any(ids.to_vec()));
    }
    query
        .order((roles::name.asc(), roles::id.asc()))
        .select((roles::id, roles::name))
        .load(conn)
        .await
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
