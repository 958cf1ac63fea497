//! `POST /auth/reset`: asks for a reset link.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, post, web};
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;
use stoa_core::rate_limit::{Layers, Quota};

use crate::dto::{OkTrue, ResetForm};
use crate::error::AuthError;
use crate::queries::{self, normalize_email};
use crate::routes::without_caller;
use crate::routes::{State, ip_of, parse_form};
use crate::state::AuthState;

// The answer goes out before the account is looked up: one statement then
// stores the token and the message (in `mail_outbox`) for an existing
// account behind it (`stoa_core::behind`), so known and unknown e-mails cost
// the client the same; with SMTP the message is sent after that too.
/// Requests a password reset link, mailed to the account's address when an
/// account with that e-mail exists. Always answers `{ok:true}` once the
/// input, the rate limits and the request's origin pass, whether or not the
/// account exists, and in the same time either way, so the answer never
/// tells whether an address is registered.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body(content = ResetForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, body = OkTrue),
        (status = 400, body = ErrorBody, description = "Invalid e-mail or request origin"),
        (status = 429, body = ErrorBody),
        (status = 500, body = ErrorBody, description = "The reset e-mail origin (APP_URL) is not configured"),
    )
)]
#[post("/auth/reset")]
pub async fn request_reset(
    req: HttpRequest,
    state: State,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    without_caller("password reset", async |quota| {
        request(&req, &state, &body, quota).await
    })
    .await
}

async fn request(
    req: &HttpRequest,
    state: &web::Data<AuthState>,
    body: &[u8],
    quota: &mut Option<Quota>,
) -> AppResult<HttpResponse> {
    let limits = &state.config.rate_limits;
    let ip = ip_of(req, state);
    let by_ip = Layers::new(&*state.limiter).layer(format!("reset:ip:{ip}"), limits.reset_ip);
    *quota = by_ip.reserve()?;
    let form: ResetForm = parse_form(req, body, AuthError::InvalidEmail)?;
    let email = normalize_email(form.email.as_deref().unwrap_or(""));
    if !queries::valid_email(&email) {
        return Err(AuthError::InvalidEmail.into());
    }
    let by_account =
        Layers::new(&*state.limiter).layer(format!("reset:account:{email}"), limits.reset_account);
    match by_account.reserve() {
        Ok(Some(q)) => *quota = quota.map_or(Some(q), |p| Some(p.tighter(q))),
        Ok(None) => {}
        Err(limited) => {
            *quota = None;
            return Err(limited);
        }
    }
    let Some(app_url) = state.config.app_url.clone() else {
        return Err(AuthError::ResetOriginMissing.into());
    };
    if let Some(origin) = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        && !state.config.allowed_origins.iter().any(|o| o == origin)
    {
        return Err(AuthError::InvalidOrigin.into());
    }
    crate::service::reset::request_behind(state, app_url, email);
    Ok(HttpResponse::Ok().json(OkTrue { ok: true }))
}
