//! Tenant queries: the super admin's list and writes, names, the public
//! lookup and the switcher's tenant list.

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::search::escape_like;
use time::OffsetDateTime;
use uuid::Uuid;

use super::Result;
use crate::dto::{
    CreateTenant, SortDir, SwitcherTenant, TenantListQuery, TenantSortField, UpdateTenant,
};
use crate::error::DirectoryError;
use crate::model::TenantRow;
use crate::schema::tenants;
use crate::service::{DirectoryService, PgDirectory};

impl PgDirectory {
    /// Tenants for a super admin, filtered, sorted and paged.
    pub async fn list_tenants_as_superadmin(
        &self,
        conn: &mut AsyncPgConnection,
        q: &TenantListQuery,
        page: stoa_core::Page,
    ) -> Result<(Vec<TenantRow>, i64)> {
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
            query
        };
        let total: i64 = filtered().count().get_result(conn).await?;
        let desc = q.sort_dir == Some(SortDir::Desc);
        let mut query = filtered().select(TenantRow::as_select());
        query = match (q.sort_field.unwrap_or_default(), desc) {
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
        let rows = query
            .limit(page.limit())
            .offset(page.offset())
            .load(conn)
            .await?;
        Ok((rows, total))
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

    /// Tenant names by id, for the super admin's manage view.
    pub async fn tenant_names(
        &self,
        conn: &mut AsyncPgConnection,
    ) -> Result<HashMap<Uuid, String>> {
        Ok(tenants::table
            .filter(tenants::deleted_at.is_null())
            .select((tenants::id, tenants::name))
            .load::<(Uuid, String)>(conn)
            .await?
            .into_iter()
            .collect())
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
