use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use stoa_acl::{AUTH_COOKIE, SESSION_COOKIE};
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};
use utoipa::ToSchema;
use uuid::Uuid;

use super::{State, auth_cookie, clear_cookie, ip_of, parse_form, safe_redirect, session_cookie};
use crate::password::{MAX_PASSWORD_LEN, verify_password};
use crate::service::{self, normalize_email};

const INVALID: &str = "Invalid email or password";

/// The login form (`application/x-www-form-urlencoded`).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginForm {
    pub email: Option<String>,
    pub password: Option<String>,
    /// `on`, `1` or `true` keeps the session for `REMEMBER_ME_DAYS` and returns a refresh token.
    pub remember: Option<String>,
    pub tenant_id: Option<String>,
    /// Alias of `tenantId`.
    pub tenant: Option<String>,
    /// Comma-separated role names; the user must hold at least one.
    pub require_role: Option<String>,
    /// Alias of `requireRole`.
    pub role: Option<String>,
    /// Where the client wants to go next (a local path).
    pub redirect: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginResponse {
    pub ok: bool,
    /// The access token (also set as the `auth_token` cookie).
    pub token: String,
    pub redirect: Option<String>,
    /// The refresh token, only with `remember`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
}

fn valid_email(email: &str) -> bool {
    let email = email.trim();
    email.len() <= 254
        && email.split_once('@').is_some_and(|(l, d)| {
            !l.is_empty() && d.contains('.') && !email.contains(char::is_whitespace)
        })
}

/// Signs in with e-mail and password. Failed attempts are rate limited per
/// account and per client address; successful logins never count.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body(content = LoginForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, body = LoginResponse, description = "Signed in; `auth_token` cookie set"),
        (status = 400, body = ErrorBody, description = "`{ok:false,error}`: invalid form"),
        (status = 401, body = ErrorBody, description = "`{ok:false,error}`: invalid credentials"),
        (status = 403, body = ErrorBody, description = "`{ok:false,error}`: the user lacks the required role"),
        (status = 429, body = ErrorBody, description = "Too many failed attempts"),
    )
)]
#[post("/auth/login")]
pub async fn login(req: HttpRequest, state: State, body: web::Bytes) -> AppResult<HttpResponse> {
    let form: LoginForm = parse_form(&req, &body, INVALID)?;
    let ip = ip_of(&req, &state);
    let email = normalize_email(form.email.as_deref().unwrap_or(""));
    let limits = &state.config.rate_limits;
    let ip_key = format!("login:ip:{ip}");
    let account_key = format!("login:account:{email}");
    state
        .limiter
        .check(&ip_key, &limits.login_ip)
        .into_result()?;
    state
        .limiter
        .check(&account_key, &limits.login_account)
        .into_result()?;

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
                .map_err(|_| AppError::bad_request(INVALID).ok_false())?,
        ),
    };
    if !valid_email(&email) || password.chars().count() < 6 || password.len() > MAX_PASSWORD_LEN {
        return Err(AppError::bad_request(INVALID).ok_false());
    }

    let mut conn = state.db.conn().await?;
    let user = service::user_for_login(&mut conn, &email, tenant).await?;
    let user = user.filter(|u| u.is_active);
    let hash = user.as_ref().and_then(|u| u.password_hash.clone());
    // Always one verification, so unknown accounts cost as much as known ones.
    let valid = verify_password(password, hash).await?;
    let Some(user) = user.filter(|_| valid) else {
        state.limiter.record(&ip_key, &limits.login_ip);
        state.limiter.record(&account_key, &limits.login_account);
        return Err(AppError::new(StatusCode::UNAUTHORIZED, INVALID).ok_false());
    };

    let roles = service::role_names(&mut conn, &user).await?;
    if let Some(required) = form.require_role.as_deref().or(form.role.as_deref()) {
        let wanted: Vec<&str> = required
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if !wanted.is_empty() && !roles.iter().any(|r| wanted.contains(&r.as_str())) {
            return Err(
                AppError::new(StatusCode::FORBIDDEN, "Not authorized for this area").ok_false(),
            );
        }
    }
    state.limiter.reset(&account_key);
    let remember = matches!(
        form.remember.as_deref().map(str::trim),
        Some("on" | "1" | "true")
    );
    let ttl = if remember {
        state.config.remember_ttl
    } else {
        state.config.session_ttl
    };
    service::touch_login(&mut conn, user.id).await?;
    let (sid, refresh, _) = service::create_session(&mut conn, user.id, remember, ttl).await?;
    let token = state.access_token(&user, sid, roles)?;
    let redirect = safe_redirect(
        form.redirect.as_deref(),
        state.config.app_url.as_deref(),
        "/backend",
    );
    Ok(HttpResponse::Ok()
        .cookie(auth_cookie(&state, &token))
        .cookie(session_cookie(&state, &refresh, ttl))
        .json(LoginResponse {
            ok: true,
            token,
            redirect: Some(redirect),
            refresh_token: remember.then_some(refresh),
        }))
}

/// Signs out: revokes the session of the presented token (bearer or cookie) and
/// of the `session_token` cookie, clears both cookies and redirects to the login page.
#[utoipa::path(
    tag = "Authentication & Accounts",
    security(("bearerAuth" = [])),
    responses(
        (status = 302, description = "Redirect to the login page; cookies cleared"),
        (status = 401, body = ErrorBody),
    )
)]
#[post("/auth/logout")]
pub async fn logout(req: HttpRequest, state: State) -> AppResult<HttpResponse> {
    let credentials = stoa_acl::Credentials::from_request(&req);
    let token = credentials
        .bearer
        .as_deref()
        .or(credentials.cookie_token.as_deref());
    let claims = token
        .and_then(|t| state.keys.verify(t))
        .ok_or_else(AppError::unauthorized)?;
    let mut conn = state.db.conn().await?;
    // A token whose session is already gone is not a credential any more.
    if service::delete_session(&mut conn, claims.sid, claims.sub).await? == 0 {
        return Err(crate::state::unauthorized(credentials.bearer.is_none()));
    }
    if let Some(cookie) = req.cookie(SESSION_COOKIE) {
        service::delete_session_by_token(&mut conn, cookie.value()).await?;
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

#[derive(Debug, Deserialize, validator::Validate, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RedirectQuery {
    /// A local path (default `/backend`).
    pub redirect: Option<String>,
}

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
    let mut conn = state.db.conn().await?;
    let user = service::user_for_login(&mut conn, &auto.email, auto.tenant)
        .await?
        .filter(|u| u.is_active);
    let hash = user.as_ref().and_then(|u| u.password_hash.clone());
    if !verify_password(auto.password.expose().to_string(), hash).await? {
        tracing::warn!("autologin: OM_AUTOLOGIN_EMAIL/OM_AUTOLOGIN_PASSWORD do not match a user");
        return Ok(to_login());
    }
    let Some(user) = user else {
        return Ok(to_login());
    };
    let roles = service::role_names(&mut conn, &user).await?;
    let (sid, _, _) =
        service::create_session(&mut conn, user.id, false, state.config.session_ttl).await?;
    let token = state.access_token(&user, sid, roles)?;
    Ok(HttpResponse::TemporaryRedirect()
        .insert_header((header::LOCATION, target))
        .cookie(auth_cookie(&state, &token))
        .finish())
}
