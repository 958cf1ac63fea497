use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use stoa_acl::{AUTH_COOKIE, SESSION_COOKIE};
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};
use utoipa::ToSchema;
use uuid::Uuid;

use stoa_core::rate_limit::Quota;

use super::{
    State, auth_cookie, clear_cookie, ip_of, no_store, parse_form, safe_redirect, session_cookie,
};
use crate::limits;
use crate::password::{MAX_PASSWORD_LEN, verify_password};
use crate::service::{self, normalize_email};
use crate::state::AuthState;

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
        (status = 403, body = ErrorBody, description = "`{ok:false,error}`: the user lacks the required role"),
        (status = 409, body = ErrorBody, description = "`{ok:false,error,code:\"tenant_required\",tenantIds}`: the password opens accounts in several tenants; send `tenantId`"),
        (status = 429, body = ErrorBody, description = "Too many failed attempts (`Retry-After`)"),
    )
)]
#[post("/auth/login")]
pub async fn login(req: HttpRequest, state: State, body: web::Bytes) -> AppResult<HttpResponse> {
    let mut quota = None;
    let result = sign_in(&req, &state, &body, &mut quota).await;
    Quota::attach(quota, result).map(no_store)
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
    let form: LoginForm = parse_form(req, body, INVALID)?;
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
                .map_err(|_| AppError::bad_request(INVALID).ok_false())?,
        ),
    };
    if !valid_email(&email) || password.chars().count() < 6 || password.len() > MAX_PASSWORD_LEN {
        return Err(AppError::bad_request(INVALID).ok_false());
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
    let candidates = service::login_candidates(&mut conn, &email, tenant).await?;
    let user = match matching_accounts(candidates, password).await?.as_slice() {
        [] => return Err(AppError::new(StatusCode::UNAUTHORIZED, INVALID).ok_false()),
        [user] => user.clone(),
        several => {
            limits::login_succeeded(state, &ip, &email);
            *quota = layers.peek();
            let tenants: Vec<Option<Uuid>> = several.iter().map(|u| u.tenant_id).collect();
            return Err(AppError::conflict(
                "This e-mail address belongs to accounts in several tenants; choose a tenant.",
            )
            .with_code("tenant_required")
            .with_field("tenantIds", tenants)
            .ok_false());
        }
    };
    // The password was right: the attempt does not count, whatever follows.
    limits::login_succeeded(state, &ip, &email);
    *quota = layers.peek();

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
        .cookie(auth_cookie(state, &token))
        .cookie(session_cookie(state, &refresh, ttl))
        .json(LoginResponse {
            ok: true,
            token,
            redirect: Some(redirect),
            refresh_token: remember.then_some(refresh),
        }))
}

/// The candidates the password opens. Every candidate costs one verification
/// on the hashing pool, run side by side; no candidate still costs one (against
/// a dummy hash), so unknown accounts answer as slowly as known ones.
async fn matching_accounts(
    candidates: Vec<service::UserRow>,
    password: String,
) -> AppResult<Vec<service::UserRow>> {
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

/// Signs out: revokes the session of the presented token (bearer or cookie) and
/// the caller's own session named by the `session_token` cookie (a cookie naming
/// someone else's session is ignored), clears both cookies and redirects to the
/// login page.
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
        service::delete_session_by_token(&mut conn, cookie.value(), claims.sub).await?;
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
    Ok(no_store(
        HttpResponse::TemporaryRedirect()
            .insert_header((header::LOCATION, target))
            .cookie(auth_cookie(&state, &token))
            .finish(),
    ))
}
