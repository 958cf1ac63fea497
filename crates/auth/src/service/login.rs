//! Signing in: which accounts a password opens, and opening their session.

use diesel_async::AsyncPgConnection;
use stoa_core::AppResult;
use uuid::Uuid;

use crate::config::Autologin;
use crate::password::verify_password;
use crate::queries::{self, UserRow};
use crate::state::AuthState;

/// The live, active accounts of `email` (in `tenant` when given) that
/// `password` opens.
pub async fn accounts_opened(
    conn: &mut AsyncPgConnection,
    email: &str,
    tenant: Option<Uuid>,
    password: String,
) -> AppResult<Vec<UserRow>> {
    let candidates = queries::login_candidates(conn, email, tenant).await?;
    matching_accounts(candidates, password).await
}

/// The candidates the password opens. Every candidate costs one verification
/// on the hashing pool, run side by side; no candidate still costs one (against
/// a dummy hash), so unknown accounts answer as slowly as known ones.
async fn matching_accounts(candidates: Vec<UserRow>, password: String) -> AppResult<Vec<UserRow>> {
    if candidates.is_empty() {
        verify_password(password, None).await?;
        return Ok(Vec::new());
    }
    let checks = candidates
        .iter()
        .map(|user| verify_password(password.clone(), user.password_hash.clone()));
    let results = futures_util::future::try_join_all(checks).await?;
    Ok(candidates
        .into_iter()
        .zip(results)
        .filter_map(|(user, valid)| valid.then_some(user))
        .collect())
}

/// Signs `user` in: records the login, opens a session for `ttl` and signs
/// its access token. Returns the access token and the raw refresh token.
pub async fn open_session(
    conn: &mut AsyncPgConnection,
    state: &AuthState,
    user: &UserRow,
    roles: Vec<String>,
    remember: bool,
    ttl: std::time::Duration,
) -> AppResult<(String, String)> {
    queries::touch_login(conn, user.id).await?;
    let (sid, refresh, _) = queries::create_session(conn, user.id, remember, ttl).await?;
    let token = state.access_token(user, sid, roles)?;
    Ok((token, refresh))
}

/// The access token of the environment's demo account (`OM_AUTOLOGIN_*`), or
/// `None` when the credentials open no active account.
pub async fn autologin(state: &AuthState, auto: &Autologin) -> AppResult<Option<String>> {
    let mut conn = state.db.conn().await?;
    let user = queries::user_for_login(&mut conn, &auto.email, auto.tenant)
        .await?
        .filter(|u| u.is_active);
    let hash = user.as_ref().and_then(|u| u.password_hash.clone());
    if !verify_password(auto.password.expose().to_string(), hash).await? {
        tracing::warn!("autologin: OM_AUTOLOGIN_EMAIL/OM_AUTOLOGIN_PASSWORD do not match a user");
        return Ok(None);
    }
    let Some(user) = user else {
        return Ok(None);
    };
    let roles = queries::role_names(&mut conn, &user).await?;
    let (sid, _, _) =
        queries::create_session(&mut conn, user.id, false, state.config.session_ttl).await?;
    Ok(Some(state.access_token(&user, sid, roles)?))
}
