//! `GET /auth/autologin`: the demo environment's sign-in.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get};
use stoa_acl::AUTH_COOKIE;
use stoa_core::AppResult;

use crate::dto::RedirectQuery;
use crate::routes::{State, auth_cookie, no_store, safe_redirect};

/// Signs in with the demo credentials of the environment (`OM_AUTOLOGIN_*`);
/// without them, redirects to the login page.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(RedirectQuery),
    responses((status = 307, description = "Redirect into the app, or to /login when disabled"))
)]
#[get("/auth/autologin")]
pub async fn autologin(
    req: HttpRequest,
    state: State,
    q: stoa_core::Query<RedirectQuery>,
) -> AppResult<HttpResponse> {
    // No caller yet: the lookup spans tenants (an audited bypass, `stoa_core::rls`).
    stoa_core::rls::set_request_scope(stoa_core::rls::bypass_scope("autologin"));
    let to_login = || {
        HttpResponse::TemporaryRedirect()
            .insert_header((header::LOCATION, "/login"))
            .finish()
    };
    let Some(auto) = state.config.autologin.clone() else {
        return Ok(to_login());
    };
    let target = safe_redirect(
        q.redirect.as_deref(),
        state.config.app_url.as_deref(),
        "/backend",
    );
    if req
        .cookie(AUTH_COOKIE)
        .is_some_and(|c| state.keys.verify(c.value()).is_some())
    {
        return Ok(HttpResponse::TemporaryRedirect()
            .insert_header((header::LOCATION, target))
            .finish());
    }
    let Some(token) = crate::service::login::autologin(&state, &auto).await? else {
        return Ok(to_login());
    };
    Ok(no_store(
        HttpResponse::TemporaryRedirect()
            .insert_header((header::LOCATION, target))
            .cookie(auth_cookie(&state, &token))
            .finish(),
    ))
}
