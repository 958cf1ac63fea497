//! Queries of sidebar variants (a user's named sidebar setups).

use diesel::PgExpressionMethods;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::UserScope;
use super::schema::sidebar_variants;
use super::settings::SidebarSettings;

/// A live sidebar variant.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = sidebar_variants)]
pub struct VariantRow {
    pub id: Uuid,
    pub name: String,
    pub settings: Value,
    pub is_active: bool,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// The user's live variants in `scope` (tenant, organization, locale).
macro_rules! variants_in {
    ($scope:expr) => {
        sidebar_variants::table
            .filter(sidebar_variants::user_id.eq($scope.user_id))
            .filter(sidebar_variants::tenant_id.is_not_distinct_from($scope.tenant_id))
            .filter(sidebar_variants::organization_id.is_not_distinct_from($scope.organization_id))
            .filter(sidebar_variants::locale.eq($scope.locale))
            .filter(sidebar_variants::deleted_at.is_null())
    };
}

/// The user's live variants in `scope`, oldest first.
pub async fn variants(
    conn: &mut AsyncPgConnection,
    scope: &UserScope,
) -> QueryResult<Vec<VariantRow>> {
    variants_in!(scope)
        .order((
            sidebar_variants::created_at.asc(),
            sidebar_variants::id.asc(),
        ))
        .select(VariantRow::as_select())
        .load(conn)
        .await
}

/// One live variant of the user in `scope`; `lock` takes a row lock.
pub async fn variant(
    conn: &mut AsyncPgConnection,
    scope: &UserScope,
    id: Uuid,
    lock: bool,
) -> QueryResult<Option<VariantRow>> {
    let query = variants_in!(scope)
        .filter(sidebar_variants::id.eq(id))
        .select(VariantRow::as_select());
    if lock {
        query.for_update().first(conn).await.optional()
    } else {
        query.first(conn).await.optional()
    }
}

/// Names of the user's live variants in `scope`, except `except`.
pub async fn variant_names(
    conn: &mut AsyncPgConnection,
    scope: &UserScope,
    except: Option<Uuid>,
) -> QueryResult<Vec<String>> {
    variants_in!(scope)
        .filter(sidebar_variants::id.ne(except.unwrap_or(Uuid::nil())))
        .select(sidebar_variants::name)
        .load(conn)
        .await
}

/// Inserts a variant.
pub async fn insert_variant(
    conn: &mut AsyncPgConnection,
    scope: &UserScope,
    name: &str,
    settings: &SidebarSettings,
    is_active: bool,
) -> QueryResult<VariantRow> {
    diesel::insert_into(sidebar_variants::table)
        .values((
            sidebar_variants::user_id.eq(scope.user_id),
            sidebar_variants::tenant_id.eq(scope.tenant_id),
            sidebar_variants::organization_id.eq(scope.organization_id),
            sidebar_variants::locale.eq(scope.locale),
            sidebar_variants::name.eq(name),
            sidebar_variants::settings.eq(settings.to_stored()),
            sidebar_variants::is_active.eq(is_active),
        ))
        .returning(VariantRow::as_returning())
        .get_result(conn)
        .await
}

/// Changes to a variant (`None` keeps the stored value).
#[derive(AsChangeset, Default)]
#[diesel(table_name = sidebar_variants)]
pub struct VariantChanges {
    pub name: Option<String>,
    pub settings: Option<Value>,
    pub is_active: Option<bool>,
}

/// Applies `changes` to variant `id` (which the caller has locked).
pub async fn update_variant(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    changes: VariantChanges,
) -> QueryResult<VariantRow> {
    if changes.name.is_none() && changes.settings.is_none() && changes.is_active.is_none() {
        return sidebar_variants::table
            .find(id)
            .select(VariantRow::as_select())
            .first(conn)
            .await;
    }
    diesel::update(sidebar_variants::table.find(id))
        .set(changes)
        .returning(VariantRow::as_returning())
        .get_result(conn)
        .await
}

/// Deactivates the user's other active variants in `scope`.
pub async fn deactivate_other_variants(
    conn: &mut AsyncPgConnection,
    scope: &UserScope,
    keep: Uuid,
) -> QueryResult<usize> {
    diesel::update(
        variants_in!(scope)
            .filter(sidebar_variants::id.ne(keep))
            .filter(sidebar_variants::is_active.eq(true)),
    )
    .set(sidebar_variants::is_active.eq(false))
    .execute(conn)
    .await
}

/// Soft-deletes variant `id`.
pub async fn delete_variant(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<usize> {
    diesel::update(sidebar_variants::table.find(id))
        .set((
            sidebar_variants::deleted_at.eq(OffsetDateTime::now_utc()),
            sidebar_variants::is_active.eq(false),
        ))
        .execute(conn)
        .await
}
