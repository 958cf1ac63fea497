//! `POST /auth/login`: e-mail and password sign-in.

use actix_web::{HttpRequest, HttpResponse, post, web};
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;
use stoa_core::rate_limit::Quota;
use uuid::Uuid;

use crate::dto::{LoginForm, LoginResponse};
use crate::error::AuthError;
use crate::limits;
use crate::password::MAX_PASSWORD_LEN;
use crate::queries::{self, normalize_email};
use crate::routes::without_caller;
use crate::routes::{
    State, auth_cookie, ip_of, no_store, parse_form, safe_redirect, session_cookie,
};
use crate::service::login as service;
use crate::state::AuthState;

fn valid_email(email: &str) -> bool {
    let email = email.trim();
    email.len() <= 254
        && email.split_once('@').is_some_and(|(l, d)| {
            !l.is_empty() && d.contains('.') && !email.contains(char::is_whitespace)
        })
}

/// Signs in with e-mail and password. Every attempt reserves a slot in the
/// rate limits before the password is checked (per account and address, per
/// address, per account); a correct password gives it back. Without a tenant,
/// an e-mail used in several tenants is checked against each account (at most
/// five): the one the password opens signs in.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body(content = LoginForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, body = LoginResponse, description = "Signed in; `auth_token` cookie set"),
        (status = 400, body = ErrorBody, description = "`{ok:false,error}`: invalid form"),
        (status = 401, body = ErrorBody, description = "`{ok:false,error}`: invalid credentials"),
        (status = 403, body = ErrorBody, description = "`{ok:false,error}`: the user lacks the required role, or (`code: cross_site_login`) the form was posted from an untrusted origin"),
        (status = 409, body = ErrorBody, description = "`{ok:false,error,code:\"tenant_required\",tenantIds}`: the password opens accounts in several tenants; send `tenantId`"),
        (status = 429, body = ErrorBody, description = "Too many failed attempts (`Retry-After`)"),
    )
)]
#[post("/auth/login")]
pub async fn login(req: HttpRequest, state: State, body: web::Bytes) -> AppResult<HttpResponse> {
    without_caller("login by e-mail", async |quota| {
        sign_in(&req, &state, &body, quota).await
    })
    .await
    .map(no_store)
}

/// Validates the form, reserves the attempt, checks the password.
async fn sign_in(
    req: &HttpRequest,
    state: &AuthState,
    body: &[u8],
    quota: &mut Option<Quota>,
) -> AppResult<HttpResponse> {
    let ip = ip_of(req, state);
    *quota = limits::login_address(state, &ip).peek();
    // Before anything else: a forged cross-site form must not sign the
    // victim's browser in (docs/security.md, "Sign-in comes from our pages").
    stoa_core::http::require_trusted_source(req).map_err(|_| AuthError::CrossSiteLogin)?;
    let form: LoginForm = parse_form(req, body, AuthError::InvalidLoginForm)?;
    let email = normalize_email(form.email.as_deref().unwrap_or(""));
    let layers = limits::login(state, &ip, &email);
    *quota = layers.peek();

    let password = form.password.unwrap_or_default();
    let tenant = match form
        .tenant_id
        .as_deref()
        .or(form.tenant.as_deref())
        .map(str::trim)
    {
        None | Some("") => None,
        Some(raw) => Some(
            raw.parse::<Uuid>()
                .map_err(|_| AuthError::InvalidLoginForm)?,
        ),
    };
    if !valid_email(&email) || password.chars().count() < 6 || password.len() > MAX_PASSWORD_LEN {
        return Err(AuthError::InvalidLoginForm.into());
    }
    // Counted before the (slow) verification, so a concurrent burst cannot
    // slip past the limit while earlier attempts are still being verified.
    match layers.reserve() {
        Ok(reserved) => *quota = reserved,
        Err(limited) => {
            *quota = None;
            return Err(limited);
        }
    }

    let mut conn = state.db.conn().await?;
    let opened = service::accounts_opened(&mut conn, &email, tenant, password).await?;
    let user = match opened.as_slice() {
        [] => return Err(AuthError::InvalidCredentials.into()),
        [user] => user.clone(),
        several => {
            limits::login_succeeded(state, &ip, &email);
            *quota = layers.peek();
            let tenant_ids = several.iter().map(|u| u.tenant_id).collect();
            return Err(AuthError::TenantRequired { tenant_ids }.into());
        }
    };
    // The password was right: the attempt does not count, whatever follows.
    limits::login_succeeded(state, &ip, &email);
    *quota = layers.peek();

    let roles = queries::role_names(&mut conn, &user).await?;
    if let Some(required) = form.require_role.as_deref().or(form.role.as_deref()) {
        let wanted: Vec<&str> = required
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if !wanted.is_empty() && !roles.iter().any(|r| wanted.contains(&r.as_str())) {
            return Err(AuthError::NotAuthorizedForArea.into());
        }
    }
    let remember = matches!(
        form.remember.as_deref().map(str::trim),
        Some("on" | "1" | "true")
    );
    let ttl = if remember {
        state.config.remember_ttl
    } else {
        state.config.session_ttl
    };
    let (token, refresh) =
        service::open_session(&mut conn, state, &user, roles, remember, ttl).await?;
    let redirect = safe_redirect(
        form.redirect.as_deref(),
        state.config.app_url.as_deref(),
        "/backend",
    );
    Ok(HttpResponse::Ok()
        .cookie(auth_cookie(state, &token))
        .cookie(session_cookie(state, &refresh, ttl))
        .json(LoginResponse {
            ok: true,
            token,
            redirect: Some(redirect),
            refresh_token: remember.then_some(refresh),
        }))
}
