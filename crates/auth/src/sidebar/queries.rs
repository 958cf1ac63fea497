//! Sidebar queries. Every function takes a connection so it composes into the
//! caller's transaction; none knows about HTTP.

use diesel::PgExpressionMethods;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::schema::{role_sidebar_preferences, sidebar_variants, user_sidebar_preferences};
use super::settings::SidebarSettings;
use super::{RoleEntry, UserScope};
use crate::schema::{roles, user_roles};

/// A stored preference (user's or role's).
#[derive(Clone, Debug, PartialEq)]
pub struct StoredPreference {
    pub id: Uuid,
    pub settings: SidebarSettings,
    pub updated_at: OffsetDateTime,
}

fn stored((id, settings, updated_at): (Uuid, Value, OffsetDateTime)) -> StoredPreference {
    StoredPreference {
        id,
        settings: SidebarSettings::from_stored(settings),
        updated_at,
    }
}

/// The user's preference in `scope`; `lock` takes a row lock for a write.
pub async fn user_preference(
    conn: &mut AsyncPgConnection,
    scope: &UserScope,
    lock: bool,
) -> QueryResult<Option<StoredPreference>> {
    let query = user_sidebar_preferences::table
        .filter(user_sidebar_preferences::user_id.eq(scope.user_id))
        .filter(user_sidebar_preferences::tenant_id.is_not_distinct_from(scope.tenant_id))
        .filter(
            user_sidebar_preferences::organization_id.is_not_distinct_from(scope.organization_id),
        )
        .filter(user_sidebar_preferences::locale.eq(scope.locale))
        .select((
            user_sidebar_preferences::id,
            user_sidebar_preferences::settings,
            user_sidebar_preferences::updated_at,
        ));
    let row = if lock {
        query.for_update().first(conn).await.optional()?
    } else {
        query.first(conn).await.optional()?
    };
    Ok(row.map(stored))
}

/// Writes the user's preference in `scope` (update, else insert).
pub async fn save_user_preference(
    conn: &mut AsyncPgConnection,
    scope: &UserScope,
    existing: Option<Uuid>,
    settings: &SidebarSettings,
) -> QueryResult<StoredPreference> {
    let columns = (
        user_sidebar_preferences::id,
        user_sidebar_preferences::settings,
        user_sidebar_preferences::updated_at,
    );
    let row = match existing {
        Some(id) => {
            diesel::update(user_sidebar_preferences::table.find(id))
                .set(user_sidebar_preferences::settings.eq(settings.to_stored()))
                .returning(columns)
                .get_result(conn)
                .await?
        }
        None => {
            diesel::insert_into(user_sidebar_preferences::table)
                .values((
                    user_sidebar_preferences::user_id.eq(scope.user_id),
                    user_sidebar_preferences::tenant_id.eq(scope.tenant_id),
                    user_sidebar_preferences::organization_id.eq(scope.organization_id),
                    user_sidebar_preferences::locale.eq(scope.locale),
                    user_sidebar_preferences::settings.eq(settings.to_stored()),
                ))
                .returning(columns)
                .get_result(conn)
                .await?
        }
    };
    Ok(stored(row))
}

/// A role's preference for (tenant, locale); `lock` takes a row lock.
pub async fn role_preference(
    conn: &mut AsyncPgConnection,
    role: Uuid,
    tenant: Uuid,
    locale: &str,
    lock: bool,
) -> QueryResult<Option<StoredPreference>> {
    let query = role_sidebar_preferences::table
        .filter(role_sidebar_preferences::role_id.eq(role))
        .filter(role_sidebar_preferences::tenant_id.eq(tenant))
        .filter(role_sidebar_preferences::locale.eq(locale))
        .select((
            role_sidebar_preferences::id,
            role_sidebar_preferences::settings,
            role_sidebar_preferences::updated_at,
        ));
    let row = if lock {
        query.for_update().first(conn).await.optional()?
    } else {
        query.first(conn).await.optional()?
    };
    Ok(row.map(stored))
}

/// Writes a role's preference for (tenant, locale) (insert or replace).
pub async fn save_role_preference(
    conn: &mut AsyncPgConnection,
    role: Uuid,
    tenant: Uuid,
    locale: &str,
    settings: &SidebarSettings,
) -> QueryResult<StoredPreference> {
    let row = diesel::insert_into(role_sidebar_preferences::table)
        .values((
            role_sidebar_preferences::role_id.eq(role),
            role_sidebar_preferences::tenant_id.eq(tenant),
            role_sidebar_preferences::locale.eq(locale),
            role_sidebar_preferences::settings.eq(settings.to_stored()),
        ))
        .on_conflict((
            role_sidebar_preferences::role_id,
            role_sidebar_preferences::tenant_id,
            role_sidebar_preferences::locale,
        ))
        .do_update()
        .set(role_sidebar_preferences::settings.eq(settings.to_stored()))
        .returning((
            role_sidebar_preferences::id,
            role_sidebar_preferences::settings,
            role_sidebar_preferences::updated_at,
        ))
        .get_result(conn)
        .await?;
    Ok(stored(row))
}

/// Deletes the preferences of `roles` for (tenant, locale); returns the roles
/// that had one.
pub async fn delete_role_preferences(
    conn: &mut AsyncPgConnection,
    roles: &[Uuid],
    tenant: Uuid,
    locale: &str,
) -> QueryResult<Vec<Uuid>> {
    if roles.is_empty() {
        return Ok(Vec::new());
    }
    diesel::delete(
        role_sidebar_preferences::table
            .filter(role_sidebar_preferences::role_id.eq_any(roles))
            .filter(role_sidebar_preferences::tenant_id.eq(tenant))
            .filter(role_sidebar_preferences::locale.eq(locale)),
    )
    .returning(role_sidebar_preferences::role_id)
    .get_results(conn)
    .await
}

/// The live roles of `tenant` by name, each with whether it has a preference
/// for `locale`.
pub async fn tenant_roles(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    locale: &str,
) -> QueryResult<Vec<RoleEntry>> {
    let rows: Vec<(Uuid, String, Option<Uuid>)> = roles::table
        .left_join(
            role_sidebar_preferences::table.on(role_sidebar_preferences::role_id
                .eq(roles::id)
                .and(role_sidebar_preferences::tenant_id.eq(roles::tenant_id))
                .and(role_sidebar_preferences::locale.eq(locale))),
        )
        .filter(roles::tenant_id.eq(tenant))
        .filter(roles::deleted_at.is_null())
        .order((roles::name.asc(), roles::id.asc()))
        .select((
            roles::id,
            roles::name,
            role_sidebar_preferences::id.nullable(),
        ))
        .load(conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, name, pref)| RoleEntry {
            id,
            name,
            has_preference: pref.is_some(),
        })
        .collect())
}

/// Which of `ids` are live roles of `tenant`.
pub async fn roles_in_tenant(
    conn: &mut AsyncPgConnection,
    ids: &[Uuid],
    tenant: Uuid,
) -> QueryResult<Vec<Uuid>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    roles::table
        .filter(roles::id.eq_any(ids))
        .filter(roles::tenant_id.eq(tenant))
        .filter(roles::deleted_at.is_null())
        .select(roles::id)
        .load(conn)
        .await
}

/// What the navigation applies, in one round trip: the first preference (by
/// role name) of the user's roles in `tenant`, and the user's own preference.
pub async fn nav_preferences(
    conn: &mut AsyncPgConnection,
    user: Option<Uuid>,
    tenant: Option<Uuid>,
    organization: Option<Uuid>,
    locale: &str,
) -> QueryResult<(Option<SidebarSettings>, Option<SidebarSettings>)> {
    // A caller without a user or tenant matches nothing (the nil uuid is never an id).
    let user = user.unwrap_or(Uuid::nil());
    let role_pref = role_sidebar_preferences::table
        .inner_join(roles::table)
        .filter(roles::deleted_at.is_null())
        .filter(role_sidebar_preferences::tenant_id.eq(tenant.unwrap_or(Uuid::nil())))
        .filter(role_sidebar_preferences::locale.eq(locale))
        .filter(
            role_sidebar_preferences::role_id.eq_any(
                user_roles::table
                    .filter(user_roles::user_id.eq(user))
                    .select(user_roles::role_id),
            ),
        )
        .order((roles::name.asc(), roles::id.asc()))
        .select(role_sidebar_preferences::settings)
        .single_value();
    let user_pref = user_sidebar_preferences::table
        .filter(user_sidebar_preferences::user_id.eq(user))
        .filter(user_sidebar_preferences::tenant_id.is_not_distinct_from(tenant))
        .filter(user_sidebar_preferences::organization_id.is_not_distinct_from(organization))
        .filter(user_sidebar_preferences::locale.eq(locale))
        .select(user_sidebar_preferences::settings)
        .single_value();
    let (role, own): (Option<Value>, Option<Value>) = diesel::select((role_pref, user_pref))
        .get_result(conn)
        .await?;
    Ok((
        role.map(SidebarSettings::from_stored),
        own.map(SidebarSettings::from_stored),
    ))
}

// ---- variants ----

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
