//! stoa-auth's implementation of the account interfaces other modules use
//! (`stoa_acl::accounts`): user lookups and display names, ACL resolution of
//! users and API keys, and role lookups for the grant boundary. The server
//! hands [`PgAccounts`] to the modules it mounts.

use std::collections::HashMap;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use stoa_acl::accounts::{
    AclResolver, KeySubject, Resolved, RoleDirectory, Selection, Subject, UserDirectory, UserRef,
};
use stoa_acl::grants::{RoleGrant, RoleLookupError};
use stoa_core::AppError;
use uuid::Uuid;

use crate::{acl, grants, queries};

/// Accounts as stored by stoa-auth (stateless: every call uses the caller's
/// connection).
#[derive(Clone, Copy, Debug, Default)]
pub struct PgAccounts;

impl UserDirectory for PgAccounts {
    fn user<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        id: Uuid,
    ) -> BoxFuture<'a, Result<Option<UserRef>, AppError>> {
        Box::pin(async move {
            Ok(queries::user_by_id(conn, id).await?.map(|u| UserRef {
                id: u.id,
                tenant_id: u.tenant_id,
                organization_id: u.organization_id,
            }))
        })
    }

    fn display_names<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        ids: &'a [Uuid],
    ) -> BoxFuture<'a, Result<HashMap<Uuid, String>, AppError>> {
        Box::pin(async move { Ok(queries::display_names(conn, ids).await?) })
    }
}

impl AclResolver for PgAccounts {
    fn resolve_user<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        subject: Subject,
        selection: &'a Selection,
    ) -> BoxFuture<'a, Result<Resolved, AppError>> {
        Box::pin(acl::resolve(conn, subject, selection))
    }

    fn resolve_key<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        subject: KeySubject<'a>,
        ceiling: Option<&'a Resolved>,
        selection: &'a Selection,
    ) -> BoxFuture<'a, Result<Resolved, AppError>> {
        Box::pin(acl::resolve_key(conn, subject, ceiling, selection))
    }

    fn live_user_scope_sql(&self, user_id_sql: &str) -> String {
        format!(
            "(SELECT ARRAY[stoa_u.tenant_id, stoa_u.organization_id] FROM users stoa_u \
             WHERE stoa_u.id = {user_id_sql} AND stoa_u.deleted_at IS NULL AND stoa_u.is_active)"
        )
    }
}

impl RoleDirectory for PgAccounts {
    fn role_names_sql(&self, ids_column: &str) -> String {
        format!(
            "ARRAY(SELECT stoa_r.name FROM unnest({ids_column}) WITH ORDINALITY \
             AS stoa_k(id, n) LEFT JOIN roles stoa_r ON stoa_r.id = stoa_k.id \
             AND stoa_r.deleted_at IS NULL ORDER BY stoa_k.n)"
        )
    }

    fn user_role_ids_sql(&self, user_id_sql: &str) -> String {
        format!(
            "ARRAY(SELECT stoa_ur.role_id FROM user_roles stoa_ur JOIN roles stoa_r \
             ON stoa_r.id = stoa_ur.role_id AND stoa_r.deleted_at IS NULL \
             WHERE stoa_ur.user_id = {user_id_sql})"
        )
    }

    fn role_grants<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        ids: &'a [Uuid],
    ) -> BoxFuture<'a, Result<Vec<RoleGrant>, AppError>> {
        Box::pin(grants::role_grants(conn, ids))
    }

    fn tenant_roles<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        ids: Option<&'a [Uuid]>,
    ) -> BoxFuture<'a, Result<Vec<(Uuid, String)>, AppError>> {
        Box::pin(async move { Ok(grants::tenant_roles(conn, tenant, ids).await?) })
    }

    fn resolve_roles<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
        references: &'a [String],
    ) -> BoxFuture<'a, Result<Result<Vec<RoleGrant>, RoleLookupError>, AppError>> {
        Box::pin(grants::resolve_roles(conn, tenant, references))
    }
}
