//! Sessions: creation, refresh-token rotation (with reuse detection) and
//! revocation, and the claims of a fresh access token.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{UserRow, user_by_id};
use crate::schema::sessions;
use crate::tokens::{AUDIENCE, Claims, ISSUER, random_token, token_hash};

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
