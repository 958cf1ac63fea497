//! Tenant queries: the super admin's list and writes, names, the public
//! lookup and the switcher's tenant list.

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::command::Actor;
use stoa_core::command::access::logged;
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::list::ListRequest;
use stoa_core::search::escape_like;
use time::OffsetDateTime;
use uuid::Uuid;

use super::Result;
use crate::dto::{
    CreateTenant, SortDir, SwitcherTenant, TenantKey, TenantListQuery, TenantSortField,
    UpdateTenant,
};
use crate::error::DirectoryError;
use crate::model::TenantRow;
use crate::schema::tenants;
use crate::service::{DirectoryService, PgDirectory};

/// The read model of the super admin's tenant list: every write to
/// `tenants` bumps it (migration `directory_tenants_read_version`), so a
/// kept page is served again only while no tenant changed.
pub const TENANTS_READ_DEPS: &[&str] = &["directory.tenants"];

/// A resolved tenant-list cursor position.
enum After {
    Name(String, Uuid),
    At(OffsetDateTime, Uuid),
}

impl PgDirectory {
    /// Tenants for a super admin, filtered, sorted and paged, with the
    /// (capped) total and the access-log entries of the read in the same
    /// statement: `(rows, counted, versions)` (`counted` and the read
    /// versions of [`TENANTS_READ_DEPS`] are `None` for an empty page that
    /// had nothing to carry them, see [`ListRequest::needs_separate_count`]).
    pub async fn list_tenants_as_superadmin(
        &self,
        conn: &mut AsyncPgConnection,
        q: &TenantListQuery,
        req: &ListRequest<TenantKey>,
        read: (&Actor, &[&str], &str),
    ) -> Result<(Vec<TenantRow>, Option<i64>, Option<Vec<i64>>)> {
        let sort = q.sort_field.unwrap_or_default();
        let desc = q.sort_dir == Some(SortDir::Desc);
        let after = match (&req.after, sort) {
            (None, _) => None,
            (Some(TenantKey::Name(name, id)), TenantSortField::Name) => {
                Some(After::Name(name.clone(), *id))
            }
            (
                Some(TenantKey::At(micros, id)),
                TenantSortField::CreatedAt | TenantSortField::UpdatedAt,
            ) => {
                let at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(*micros) * 1_000)
                    .map_err(|_| DirectoryError::BadCursor)?;
                Some(After::At(at, *id))
            }
            (Some(_), _) => return Err(DirectoryError::BadCursor),
        };
        let filtered = || {
            let mut query = tenants::table
                .filter(tenants::deleted_at.is_null())
                .into_boxed();
            if let Some(id) = q.id {
                query = query.filter(tenants::id.eq(id));
            }
            if let Some(search) = q.search.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                query = query.filter(tenants::name.ilike(format!("%{}%", escape_like(search))));
            }
            if let Some(active) = q.is_active {
                query = query.filter(tenants::is_active.eq(active));
            }
            // Keyset: after the cursor's row in the list's order (the sorted
            // column in `sortDir`, ties by id ascending).
            let column = match sort {
                TenantSortField::Name => "tenants.name",
                TenantSortField::CreatedAt => "tenants.created_at",
                TenantSortField::UpdatedAt => "tenants.updated_at",
            };
            let op = if desc { "<" } else { ">" };
            match &after {
                None => {}
                Some(After::Name(name, id)) => {
                    query = query.filter(
                        sql::<Bool>(&format!("({column} {op} "))
                            .bind::<Text, _>(name.clone())
                            .sql(&format!(" OR ({column} = "))
                            .bind::<Text, _>(name.clone())
                            .sql(" AND tenants.id > ")
                            .bind::<diesel::sql_types::Uuid, _>(*id)
                            .sql("))"),
                    );
                }
                Some(After::At(at, id)) => {
                    query = query.filter(
                        sql::<Bool>(&format!("({column} {op} "))
                            .bind::<Timestamptz, _>(*at)
                            .sql(&format!(" OR ({column} = "))
                            .bind::<Timestamptz, _>(*at)
                            .sql(" AND tenants.id > ")
                            .bind::<diesel::sql_types::Uuid, _>(*id)
                            .sql("))"),
                    );
                }
            }
            query
        };
        let query = filtered().select((
            TenantRow::as_select(),
            req.count(filtered().select(tenants::id)),
            versions(ReadDeps::new(TENANTS_READ_DEPS, None)),
        ));
        let query = match (sort, desc) {
            (TenantSortField::Name, false) => query.order((tenants::name.asc(), tenants::id.asc())),
            (TenantSortField::Name, true) => query.order((tenants::name.desc(), tenants::id.asc())),
            (TenantSortField::CreatedAt, false) => {
                query.order((tenants::created_at.asc(), tenants::id.asc()))
            }
            (TenantSortField::CreatedAt, true) => {
                query.order((tenants::created_at.desc(), tenants::id.asc()))
            }
            (TenantSortField::UpdatedAt, false) => {
                query.order((tenants::updated_at.asc(), tenants::id.asc()))
            }
            (TenantSortField::UpdatedAt, true) => {
                query.order((tenants::updated_at.desc(), tenants::id.asc()))
            }
        };
        let (actor, fields, path) = read;
        // Reads of tenants are access-logged, in the same statement.
        let rows: Vec<(TenantRow, i64, Vec<i64>)> = logged(
            query.limit(req.limit()).offset(req.offset()),
            actor,
            "directory.tenant",
            q.id.is_some(),
            fields,
            path,
        )
        .load(conn)
        .await?;
        let mut counted = <[_]>::first(&rows).map(|(_, n, _): &(TenantRow, i64, Vec<i64>)| *n);
        let versions = <[_]>::first(&rows).map(|(_, _, v): &(TenantRow, i64, Vec<i64>)| v.clone());
        if req.needs_separate_count(rows.len()) {
            counted = Some(
                diesel::select(req.count(filtered().select(tenants::id)))
                    .get_result(conn)
                    .await?,
            );
        }
        Ok((
            rows.into_iter().map(|(row, _, _)| row).collect(),
            counted,
            versions,
        ))
    }

    pub async fn create_tenant_with(
        &self,
        conn: &mut AsyncPgConnection,
        input: &CreateTenant,
    ) -> Result<Uuid> {
        Ok(diesel::insert_into(tenants::table)
            .values((
                tenants::name.eq(input.name.trim()),
                tenants::is_active.eq(input.is_active.unwrap_or(true)),
            ))
            .returning(tenants::id)
            .get_result(conn)
            .await?)
    }

    pub async fn update_tenant(
        &self,
        conn: &mut AsyncPgConnection,
        input: &UpdateTenant,
    ) -> Result<()> {
        let current = self
            .tenant(conn, input.id)
            .await?
            .ok_or(DirectoryError::TenantNotFound)?;
        diesel::update(tenants::table.filter(tenants::id.eq(input.id)))
            .set((
                tenants::name.eq(input
                    .name
                    .as_deref()
                    .map(str::trim)
                    .unwrap_or(&current.name)),
                tenants::is_active.eq(input.is_active.unwrap_or(current.is_active)),
            ))
            .execute(conn)
            .await?;
        Ok(())
    }

    pub async fn delete_tenant(&self, conn: &mut AsyncPgConnection, id: Uuid) -> Result<()> {
        let n = diesel::update(
            tenants::table.filter(tenants::id.eq(id).and(tenants::deleted_at.is_null())),
        )
        .set((
            tenants::deleted_at.eq(OffsetDateTime::now_utc()),
            tenants::is_active.eq(false),
        ))
        .execute(conn)
        .await?;
        if n == 0 {
            return Err(DirectoryError::TenantNotFound);
        }
        Ok(())
    }

    /// Public lookup: a live tenant by id (inactive tenants still resolve).
    pub async fn lookup_tenant(
        &self,
        conn: &mut AsyncPgConnection,
        id: Uuid,
    ) -> Result<Option<TenantRow>> {
        self.tenant(conn, id).await
    }
}

/// Every live tenant by name, for the super admin's organization switcher.
pub(crate) async fn live_tenants(conn: &mut AsyncPgConnection) -> Result<Vec<SwitcherTenant>> {
    let rows: Vec<(Uuid, String, bool)> = tenants::table
        .filter(tenants::deleted_at.is_null())
        .order((tenants::name.asc(), tenants::id.asc()))
        .select((tenants::id, tenants::name, tenants::is_active))
        .load(conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, name, is_active)| SwitcherTenant {
            id,
            name,
            is_active,
        })
        .collect())
}
