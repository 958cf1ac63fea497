//! [`KeyDirectory`]: the live keys of a tenant for other modules (business
//! rules' platform-call options), so that none of them reads `api_keys`.
//! Role and organization names come from their owners' SQL
//! (`RoleDirectory::role_names_sql`, `OrganizationDirectory::organization_name_sql`),
//! selected in this one statement, as the key list does.

use std::sync::Arc;

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Array, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_acl::{KeyDirectory, KeyRef, OrganizationDirectory, RoleDirectory};
use stoa_core::AppError;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::api_keys;

/// stoa-api-keys' [`KeyDirectory`].
pub struct PgKeyDirectory {
    roles: Arc<dyn RoleDirectory>,
    organizations: Arc<dyn OrganizationDirectory>,
}

impl PgKeyDirectory {
    pub fn new(
        roles: Arc<dyn RoleDirectory>,
        organizations: Arc<dyn OrganizationDirectory>,
    ) -> Self {
        Self {
            roles,
            organizations,
        }
    }
}

type Row = (
    Uuid,
    String,
    String,
    Option<Uuid>,
    Vec<Uuid>,
    Vec<Option<String>>,
    Option<String>,
);

impl KeyDirectory for PgKeyDirectory {
    fn live_keys<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
    ) -> BoxFuture<'a, Result<Vec<KeyRef>, AppError>> {
        Box::pin(async move {
            let now = OffsetDateTime::now_utc();
            let rows: Vec<Row> = api_keys::table
                .filter(api_keys::tenant_id.eq(tenant))
                .filter(api_keys::deleted_at.is_null())
                .filter(
                    api_keys::expires_at
                        .is_null()
                        .or(api_keys::expires_at.gt(now)),
                )
                .order((api_keys::name, api_keys::id))
                .select((
                    api_keys::id,
                    api_keys::name,
                    api_keys::key_prefix,
                    api_keys::organization_id,
                    api_keys::role_ids,
                    sql::<Array<Nullable<Text>>>(&self.roles.role_names_sql("api_keys.role_ids")),
                    sql::<Nullable<Text>>(
                        &self
                            .organizations
                            .organization_name_sql("api_keys.organization_id"),
                    ),
                ))
                .load(conn)
                .await?;
            Ok(rows.into_iter().map(key_ref).collect())
        })
    }
}

/// A row as other modules see it: roles that are gone (no name) left out,
/// the rest by name.
fn key_ref(
    (id, name, key_prefix, organization_id, role_ids, role_names, organization_name): Row,
) -> KeyRef {
    let mut roles: Vec<(Uuid, String)> = role_ids
        .into_iter()
        .zip(role_names)
        .filter_map(|(id, name)| name.map(|name| (id, name)))
        .collect();
    roles.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    roles.dedup_by_key(|r| r.0);
    KeyRef {
        id,
        name,
        key_prefix,
        organization_id,
        organization_name,
        roles,
    }
}
