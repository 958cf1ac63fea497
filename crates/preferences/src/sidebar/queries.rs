//! Queries of sidebar preferences (users' and roles'). Every function takes a
//! connection so it composes into the caller's transaction; none knows about HTTP.

use diesel::PgExpressionMethods;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::schema::auth_mirror::{roles, user_roles};
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

/// The live role `id` of `tenant`, if there is one.
pub async fn tenant_role(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    tenant: Uuid,
) -> QueryResult<Option<Uuid>> {
    roles::table
        .filter(roles::id.eq(id))
        .filter(roles::tenant_id.eq(tenant))
        .filter(roles::deleted_at.is_null())
        .select(roles::id)
        .first(conn)
        .await
        .optional()
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
