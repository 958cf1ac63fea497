//! Refresh-token rotation and sign-out.

use diesel_async::AsyncPgConnection;
use stoa_core::AppResult;
use uuid::Uuid;

use crate::queries::{self, Refresh};
use crate::state::AuthState;

/// Rotates a session: a valid refresh token yields a new access token and a
/// new refresh token (`(access, refresh)`). Presenting an already-rotated
/// token revokes the session; it and any invalid token give `None`.
pub async fn rotate(state: &AuthState, raw: &str) -> AppResult<Option<(String, String)>> {
    let mut conn = state.db.conn().await?;
    let raw = raw.to_string();
    let outcome = {
        use diesel_async::AsyncConnection;
        let conn: &mut diesel_async::AsyncPgConnection = &mut conn;
        conn.transaction::<_, diesel::result::Error, _>(async |c| {
            queries::rotate_refresh_token(c, &raw).await
        })
        .await?
    };
    match outcome {
        Refresh::Rotated {
            session,
            user,
            token,
        } => {
            let roles = queries::role_names(&mut conn, &user).await?;
            let access = state.access_token(&user, session, roles)?;
            Ok(Some((access, token)))
        }
        Refresh::Reused => {
            tracing::warn!("refresh token reused after rotation: session revoked");
            Ok(None)
        }
        Refresh::Invalid => Ok(None),
    }
}

/// Signs out: deletes session `sid` of `user` and, when the caller also sent
/// a refresh token, that session if it is the same user's (a token naming
/// someone else's session is ignored). `false` when `sid` was already gone.
pub async fn end(
    conn: &mut AsyncPgConnection,
    sid: Uuid,
    user: Uuid,
    refresh_token: Option<&str>,
) -> AppResult<bool> {
    if queries::delete_session(conn, sid, user).await? == 0 {
        return Ok(false);
    }
    if let Some(raw) = refresh_token {
        queries::delete_session_by_token(conn, raw, user).await?;
    }
    Ok(true)
}
