//! `POST /auth/logout`: ends the caller's session.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, post};
use stoa_acl::{AUTH_COOKIE, SESSION_COOKIE};
use stoa_core::AppResult;

use crate::error::AuthError;
use crate::routes::{State, clear_cookie};
use crate::service::session;

/// Signs out: revokes the session of the presented token (bearer or cookie) and
/// the caller's own session named by the `session_token` cookie (a cookie naming
/// someone else's session is ignored), clears both cookies and redirects to the
/// login page.
#[utoipa::path(
    tag = "Authentication & Accounts",
    responses(
        (status = 302, description = "Redirect to the login page; cookies cleared"),
    )
)]
#[post("/auth/logout")]
pub async fn logout(req: HttpRequest, state: State) -> AppResult<HttpResponse> {
    // No caller yet: the lookup spans tenants (an audited bypass, `stoa_core::rls`).
    stoa_core::rls::set_request_scope(stoa_core::rls::bypass_scope("logout"));
    let credentials = stoa_acl::Credentials::from_request(&req);
    let token = credentials
        .bearer
        .as_deref()
        .or(credentials.cookie_token.as_deref());
    let claims = token
        .and_then(|t| state.keys.verify(t))
        .ok_or(AuthError::Unauthorized)?;
    let mut conn = state.db.conn().await?;
    let refresh = req.cookie(SESSION_COOKIE);
    let refresh = refresh.as_ref().map(|c| c.value());
    // A token whose session is already gone is not a credential any more.
    if !session::end(&mut conn, claims.sid, claims.sub, refresh).await? {
        return Err(crate::state::unauthorized(credentials.bearer.is_none()));
    }
    let location = match &state.config.app_url {
        Some(app) => format!("{app}/login"),
        None => "/login".into(),
    };
    Ok(HttpResponse::Found()
        .insert_header((header::LOCATION, location))
        .cookie(clear_cookie(AUTH_COOKIE))
        .cookie(clear_cookie(SESSION_COOKIE))
        .finish())
}
