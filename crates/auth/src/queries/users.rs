//! Users: lookups for login and profile, and the few writes outside commands.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{UserRow, normalize_email};
use crate::schema::{roles, user_roles, users};

/// A live user by id.
pub async fn user_by_id(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<Option<UserRow>> {
    users::table
        .filter(users::id.eq(id))
        .filter(users::deleted_at.is_null())
        .select(UserRow::as_select())
        .first(conn)
        .await
        .optional()
}

/// The live user a login names: by (email, tenant), or without a tenant the
/// only live user with that e-mail (several tenants → nobody, as the reference).
pub async fn user_for_login(
    conn: &mut AsyncPgConnection,
    email: &str,
    tenant: Option<Uuid>,
) -> QueryResult<Option<UserRow>> {
    let mut query = users::table
        .filter(users::email.eq(normalize_email(email)))
        .filter(users::deleted_at.is_null())
        .select(UserRow::as_select())
        .limit(2)
        .into_boxed();
    if let Some(tenant) = tenant {
        query = query.filter(users::tenant_id.eq(tenant));
    }
    let mut found = query.load(conn).await?;
    Ok(if found.len() == 1 { found.pop() } else { None })
}

/// At most this many accounts are tried for a login without a tenant.
pub const MAX_LOGIN_CANDIDATES: i64 = 5;

/// The live, active accounts a login may open: the one of (email, tenant), or
/// without a tenant every account with that e-mail, oldest first, at most
/// [`MAX_LOGIN_CANDIDATES`].
pub async fn login_candidates(
    conn: &mut AsyncPgConnection,
    email: &str,
    tenant: Option<Uuid>,
) -> QueryResult<Vec<UserRow>> {
    let mut query = users::table
        .filter(users::email.eq(normalize_email(email)))
        .filter(users::deleted_at.is_null())
        .filter(users::is_active.eq(true))
        .select(UserRow::as_select())
        .order((users::created_at.asc(), users::id.asc()))
        .limit(MAX_LOGIN_CANDIDATES)
        .into_boxed();
    if let Some(tenant) = tenant {
        query = query.filter(users::tenant_id.eq(tenant));
    }
    query.load(conn).await
}

/// Names of the user's live roles in their tenant.
pub async fn role_names(conn: &mut AsyncPgConnection, user: &UserRow) -> QueryResult<Vec<String>> {
    let mut query = user_roles::table
        .inner_join(roles::table)
        .filter(user_roles::user_id.eq(user.id))
        .filter(roles::deleted_at.is_null())
        .select(roles::name)
        .order(roles::name.asc())
        .into_boxed();
    if let Some(tenant) = user.tenant_id {
        query = query.filter(roles::tenant_id.eq(tenant));
    }
    query.load(conn).await
}

pub async fn touch_login(conn: &mut AsyncPgConnection, user: Uuid) -> QueryResult<()> {
    diesel::update(users::table.filter(users::id.eq(user)))
        .set(users::last_login_at.eq(OffsetDateTime::now_utc()))
        .execute(conn)
        .await
        .map(|_| ())
}

pub async fn set_password_hash(
    conn: &mut AsyncPgConnection,
    user: Uuid,
    hash: &str,
) -> QueryResult<()> {
    diesel::update(users::table.filter(users::id.eq(user)))
        .set(users::password_hash.eq(hash))
        .execute(conn)
        .await
        .map(|_| ())
}

/// Whether another live user of the tenant already uses `email`.
pub async fn email_taken(
    conn: &mut AsyncPgConnection,
    tenant: Option<Uuid>,
    email: &str,
    except: Uuid,
) -> QueryResult<bool> {
    let mut query = users::table
        .filter(users::email.eq(normalize_email(email)))
        .filter(users::deleted_at.is_null())
        .filter(users::id.ne(except))
        .into_boxed();
    query = match tenant {
        Some(t) => query.filter(users::tenant_id.eq(t)),
        None => query.filter(users::tenant_id.is_null()),
    };
    let n: i64 = query.count().get_result(conn).await?;
    Ok(n > 0)
}

/// Display names (name, else e-mail) of the given users, deleted ones included.
pub async fn display_names(
    conn: &mut AsyncPgConnection,
    ids: &[Uuid],
) -> QueryResult<std::collections::HashMap<Uuid, String>> {
    if ids.is_empty() {
        return Ok(Default::default());
    }
    let rows: Vec<(Uuid, Option<String>, String)> = users::table
        .filter(users::id.eq_any(ids))
        .select((users::id, users::name, users::email))
        .load(conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, name, email)| {
            let name = name.filter(|n| !n.trim().is_empty()).unwrap_or(email);
            (id, name)
        })
        .collect())
}

/// A live user by id, in `tenant` when one is given.
pub async fn live_user_in(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    tenant: Option<Uuid>,
) -> QueryResult<Option<UserRow>> {
    let mut query = users::table
        .filter(users::id.eq(id))
        .filter(users::deleted_at.is_null())
        .select(UserRow::as_select())
        .into_boxed();
    if let Some(tenant) = tenant {
        query = query.filter(users::tenant_id.eq(tenant));
    }
    query.first(conn).await.optional()
}

/// The ids of the roles linked to `user` (deleted roles included).
pub async fn role_ids_of(conn: &mut AsyncPgConnection, user: Uuid) -> QueryResult<Vec<Uuid>> {
    user_roles::table
        .filter(user_roles::user_id.eq(user))
        .select(user_roles::role_id)
        .load(conn)
        .await
}
