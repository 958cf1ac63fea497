//! Users, sessions and reset tokens: the rules behind the session endpoints.
//! Functions take a connection so they compose into one transaction.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::{password_resets, roles, sessions, user_roles, users};
use crate::tokens::{AUDIENCE, Claims, ISSUER, random_token, token_hash};

#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = users)]
pub struct UserRow {
    pub id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub email: String,
    pub name: Option<String>,
    pub password_hash: Option<String>,
    pub is_confirmed: bool,
    pub is_active: bool,
}

/// E-mails are compared trimmed and lower-cased.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

/// Whether a normalised e-mail is acceptable for an account: one `@`-split
/// with a non-empty local part, a dotted domain that neither starts nor ends
/// with a dot, no white space or control characters, at most 254 bytes.
pub fn valid_email(email: &str) -> bool {
    email.len() <= 254
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
        })
}

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

/// A new session; returns its id, the raw refresh token and its expiry.
pub async fn create_session(
    conn: &mut AsyncPgConnection,
    user: Uuid,
    remember: bool,
    ttl: std::time::Duration,
) -> QueryResult<(Uuid, String, OffsetDateTime)> {
    // Expired sessions of this user go on each login, so the table stays small.
    diesel::delete(
        sessions::table
            .filter(sessions::user_id.eq(user))
            .filter(sessions::expires_at.lt(OffsetDateTime::now_utc())),
    )
    .execute(conn)
    .await?;
    let raw = random_token();
    let expires = OffsetDateTime::now_utc() + ttl;
    let id: Uuid = diesel::insert_into(sessions::table)
        .values((
            sessions::user_id.eq(user),
            sessions::token_hash.eq(token_hash(&raw)),
            sessions::remember.eq(remember),
            sessions::expires_at.eq(expires),
            sessions::last_used_at.eq(OffsetDateTime::now_utc()),
        ))
        .returning(sessions::id)
        .get_result(conn)
        .await?;
    Ok((id, raw, expires))
}

/// The claims of a fresh access token for `user` in session `sid`.
pub fn claims_for(
    user: &UserRow,
    sid: Uuid,
    roles: Vec<String>,
    ttl: std::time::Duration,
) -> Claims {
    let now = OffsetDateTime::now_utc().unix_timestamp();
    Claims {
        sub: user.id,
        sid,
        tenant_id: user.tenant_id,
        org_id: user.organization_id,
        email: user.email.clone(),
        roles,
        iat: now,
        exp: now + i64::try_from(ttl.as_secs()).unwrap_or(28_800),
        iss: ISSUER.into(),
        aud: AUDIENCE.into(),
    }
}

/// Deletes session `id` of `user`; returns how many rows went (0 or 1).
pub async fn delete_session(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    user: Uuid,
) -> QueryResult<usize> {
    diesel::delete(
        sessions::table
            .filter(sessions::id.eq(id))
            .filter(sessions::user_id.eq(user)),
    )
    .execute(conn)
    .await
}

/// Deletes the session whose refresh token is `raw`, if it is `user`'s.
pub async fn delete_session_by_token(
    conn: &mut AsyncPgConnection,
    raw: &str,
    user: Uuid,
) -> QueryResult<usize> {
    diesel::delete(
        sessions::table
            .filter(sessions::token_hash.eq(token_hash(raw)))
            .filter(sessions::user_id.eq(user)),
    )
    .execute(conn)
    .await
}

/// Deletes the user's sessions, except `keep`.
pub async fn delete_user_sessions(
    conn: &mut AsyncPgConnection,
    user: Uuid,
    keep: Option<Uuid>,
) -> QueryResult<usize> {
    diesel::delete(
        sessions::table
            .filter(sessions::user_id.eq(user))
            .filter(sessions::id.ne(keep.unwrap_or(Uuid::nil()))),
    )
    .execute(conn)
    .await
}

/// Outcome of presenting a refresh token.
pub enum Refresh {
    /// Valid: the session was rotated; here are the user and the new raw token.
    Rotated {
        session: Uuid,
        user: UserRow,
        token: String,
    },
    /// Unknown, expired, or the user is gone.
    Invalid,
    /// A token that was already rotated away: presumed stolen, session revoked.
    Reused,
}

/// Exchanges a refresh token for a new one (rotation) in one transaction.
pub async fn rotate_refresh_token(conn: &mut AsyncPgConnection, raw: &str) -> QueryResult<Refresh> {
    let hash = token_hash(raw);
    let now = OffsetDateTime::now_utc();
    let current: Option<(Uuid, Uuid)> = sessions::table
        .filter(sessions::token_hash.eq(&hash))
        .filter(sessions::expires_at.gt(now))
        .select((sessions::id, sessions::user_id))
        .for_update()
        .first(conn)
        .await
        .optional()?;
    let Some((session, user_id)) = current else {
        let reused =
            diesel::delete(sessions::table.filter(sessions::previous_token_hash.eq(&hash)))
                .execute(conn)
                .await?;
        return Ok(if reused > 0 {
            Refresh::Reused
        } else {
            Refresh::Invalid
        });
    };
    let Some(user) = user_by_id(conn, user_id).await?.filter(|u| u.is_active) else {
        return Ok(Refresh::Invalid);
    };
    let token = random_token();
    diesel::update(sessions::table.filter(sessions::id.eq(session)))
        .set((
            sessions::token_hash.eq(token_hash(&token)),
            sessions::previous_token_hash.eq(&hash),
            sessions::last_used_at.eq(now),
        ))
        .execute(conn)
        .await?;
    Ok(Refresh::Rotated {
        session,
        user,
        token,
    })
}

pub async fn touch_login(conn: &mut AsyncPgConnection, user: Uuid) -> QueryResult<()> {
    diesel::update(users::table.filter(users::id.eq(user)))
        .set(users::last_login_at.eq(OffsetDateTime::now_utc()))
        .execute(conn)
        .await
        .map(|_| ())
}

/// What a reset request stores: the token's hash and the message, whose
/// recipient is filled in by the database.
pub struct ResetRequest<'a> {
    pub email: &'a str,
    pub token_hash: &'a str,
    pub expires_at: OffsetDateTime,
    pub subject: &'a str,
    pub body: &'a str,
    /// Also store the message in `mail_outbox` (the outbox mailer's delivery).
    pub store_mail: bool,
}

#[derive(QueryableByName)]
struct Recipient {
    #[diesel(sql_type = diesel::sql_types::Text)]
    email: String,
}

/// One statement, whether or not the account exists: finds the first live,
/// active user with the e-mail (any tenant, oldest first), stores a reset token
/// for them and, with `store_mail`, the message in `mail_outbox`. Returns the
/// recipient when there was one.
pub async fn store_reset_request(
    conn: &mut AsyncPgConnection,
    request: &ResetRequest<'_>,
) -> QueryResult<Option<String>> {
    use diesel::sql_types::{Bool, Text, Timestamptz};
    let found: Vec<Recipient> = diesel::sql_query(
        "WITH target AS ( \
             SELECT id, email FROM users \
             WHERE email = $1 AND deleted_at IS NULL AND is_active \
             ORDER BY created_at, id LIMIT 1 \
         ), token AS ( \
             INSERT INTO password_resets (user_id, token_hash, kind, expires_at) \
             SELECT id, $2, 'reset', $3 FROM target RETURNING user_id \
         ), mail AS ( \
             INSERT INTO mail_outbox (recipient, subject, body, status) \
             SELECT email, $4, $5, 'stored' FROM target WHERE $6 RETURNING id \
         ) \
         SELECT email FROM target",
    )
    .bind::<Text, _>(normalize_email(request.email))
    .bind::<Text, _>(request.token_hash)
    .bind::<Timestamptz, _>(request.expires_at)
    .bind::<Text, _>(request.subject)
    .bind::<Text, _>(request.body)
    .bind::<Bool, _>(request.store_mail)
    .load(conn)
    .await?;
    Ok(found.into_iter().next().map(|r| r.email))
}

/// A new reset (or invite) token; returns the raw token.
pub async fn create_reset_token(
    conn: &mut AsyncPgConnection,
    user: Uuid,
    kind: &str,
    ttl: std::time::Duration,
) -> QueryResult<String> {
    let raw = random_token();
    diesel::insert_into(password_resets::table)
        .values((
            password_resets::user_id.eq(user),
            password_resets::token_hash.eq(token_hash(&raw)),
            password_resets::kind.eq(kind),
            password_resets::expires_at.eq(OffsetDateTime::now_utc() + ttl),
        ))
        .execute(conn)
        .await?;
    Ok(raw)
}

/// Marks a reset token used (atomically: one winner) and returns its user.
pub async fn consume_reset_token(
    conn: &mut AsyncPgConnection,
    raw: &str,
) -> QueryResult<Option<Uuid>> {
    let now = OffsetDateTime::now_utc();
    diesel::update(
        password_resets::table
            .filter(password_resets::token_hash.eq(token_hash(raw)))
            .filter(password_resets::used_at.is_null())
            .filter(password_resets::expires_at.gt(now)),
    )
    .set(password_resets::used_at.eq(now))
    .returning(password_resets::user_id)
    .get_result(conn)
    .await
    .optional()
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
