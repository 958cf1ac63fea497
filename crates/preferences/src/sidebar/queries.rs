//! Queries of sidebar preferences (users' and roles'). Every function takes a
//! connection so it composes into the caller's transaction; none knows about HTTP.

use diesel::PgExpressionMethods;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_acl::RoleDirectory;
use stoa_core::AppError;
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::prepared::Cached;
use time::OffsetDateTime;
use uuid::Uuid;

use super::schema::{role_sidebar_preferences, user_sidebar_preferences};
use super::settings::SidebarSettings;
use super::{RoleEntry, UserScope};

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

/// The live roles of `tenant` by name (from the owner of roles,
/// [`RoleDirectory::tenant_roles`]), each with whether it has a preference
/// for `locale`.
pub async fn tenant_roles(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    tenant: Uuid,
    locale: &str,
) -> Result<Vec<RoleEntry>, AppError> {
    let listed = roles.tenant_roles(conn, tenant, None).await?;
    let with_preference: Vec<Uuid> = role_sidebar_preferences::table
        .filter(role_sidebar_preferences::tenant_id.eq(tenant))
        .filter(role_sidebar_preferences::locale.eq(locale))
        .select(role_sidebar_preferences::role_id)
        .load(conn)
        .await?;
    Ok(listed
        .into_iter()
        .map(|(id, name)| RoleEntry {
            has_preference: with_preference.contains(&id),
            id,
            name,
        })
        .collect())
}

/// Which of `ids` are live roles of `tenant`.
pub async fn roles_in_tenant(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    ids: &[Uuid],
    tenant: Uuid,
) -> Result<Vec<Uuid>, AppError> {
    Ok(roles
        .tenant_roles(conn, tenant, Some(ids))
        .await?
        .into_iter()
        .map(|(id, _)| id)
        .collect())
}

/// What the navigation applies, in one round trip: the first preference (by
/// role name) of the user's roles in `tenant`, and the user's own preference.
pub async fn nav_preferences(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    user: Option<Uuid>,
    tenant: Option<Uuid>,
    organization: Option<Uuid>,
    locale: &str,
) -> QueryResult<NavPreferences> {
    // A caller without a user or tenant matches nothing (the nil uuid is never an id).
    let user = user.unwrap_or(Uuid::nil());
    // The user's live roles and their names are stoa-auth's SQL
    // (`RoleDirectory`): the user id reaches its fragment as a column of a
    // one-row subquery, so every value stays bound and the text fixed.
    let role_pref = sql::<Nullable<Jsonb>>("(SELECT p.settings FROM (SELECT ")
        .bind::<SqlUuid, _>(user)
        .sql("::uuid AS user_id) AS stoa_me, role_sidebar_preferences AS p WHERE p.tenant_id = ")
        .bind::<SqlUuid, _>(tenant.unwrap_or(Uuid::nil()))
        .sql(" AND p.locale = ")
        .bind::<Text, _>(locale.to_string())
        .sql(&format!(
            " AND p.role_id = ANY({}) ORDER BY ({})[1], p.role_id LIMIT 1)",
            roles.user_role_ids_sql("stoa_me.user_id"),
            roles.role_names_sql("ARRAY[p.role_id]"),
        ));
    let user_pref = user_sidebar_preferences::table
        .filter(user_sidebar_preferences::user_id.eq(user))
        .filter(user_sidebar_preferences::tenant_id.is_not_distinct_from(tenant))
        .filter(user_sidebar_preferences::organization_id.is_not_distinct_from(organization))
        .filter(user_sidebar_preferences::locale.eq(locale))
        .select(user_sidebar_preferences::settings)
        .single_value();
    let deps = ReadDeps::new(NAV_READ_DEPS, tenant);
    // Kept prepared: the `sql(...)` text is fixed for every caller.
    let (role, own, versions): (Option<Value>, Option<Value>, Vec<i64>) =
        Cached(diesel::select((role_pref, user_pref, versions(deps))))
            .get_result(conn)
            .await?;
    Ok(NavPreferences {
        role: role.map(SidebarSettings::from_stored),
        own: own.map(SidebarSettings::from_stored),
        deps,
        versions,
    })
}

/// The read models the admin navigation depends on beyond the caller's ACL
/// (migration `auth_sidebar_read_version`).
pub const NAV_READ_DEPS: &[&str] = &["preferences.sidebar"];

/// The sidebar preferences the navigation applies, and the versions of the
/// read models they were read from (in the same statement).
pub struct NavPreferences {
    pub role: Option<SidebarSettings>,
    pub own: Option<SidebarSettings>,
    pub deps: ReadDeps,
    pub versions: Vec<i64>,
}
