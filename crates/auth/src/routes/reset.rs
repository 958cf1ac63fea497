use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, post, web};
use serde::{Deserialize, Serialize};
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};
use stoa_mail::Mail;
use utoipa::ToSchema;

use stoa_core::rate_limit::{Layers, Quota};
use time::OffsetDateTime;

use super::{State, ip_of, no_store, parse_form};
use crate::password::{MAX_PASSWORD_LEN, hash_password};
use crate::service::{self, normalize_email};
use crate::state::AuthState;
use crate::tokens::{random_token, token_hash};

/// Reset links are valid for an hour.
const RESET_TTL: std::time::Duration = std::time::Duration::from_secs(3600);

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ResetForm {
    pub email: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OkTrue {
    pub ok: bool,
}

/// Requests a password reset link. Always answers `{ok:true}`, whether or not
/// the account exists, after the same work: one statement stores the token and
/// the message (in `mail_outbox`) when the account exists. With SMTP the
/// message is sent after the answer, never while the client waits.
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
    let mut quota = None;
    let result = request(&req, &state, &body, &mut quota).await;
    Quota::attach(quota, result)
}

async fn request(
    req: &HttpRequest,
    state: &AuthState,
    body: &[u8],
    quota: &mut Option<Quota>,
) -> AppResult<HttpResponse> {
    let limits = &state.config.rate_limits;
    let ip = ip_of(req, state);
    let by_ip = Layers::new(&*state.limiter).layer(format!("reset:ip:{ip}"), limits.reset_ip);
    *quota = by_ip.reserve()?;
    let form: ResetForm = parse_form(req, body, "Invalid email")?;
    let email = normalize_email(form.email.as_deref().unwrap_or(""));
    if !service::valid_email(&email) {
        return Err(AppError::bad_request("Invalid email").ok_false());
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
        return Err(AppError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Password reset email origin is not configured",
        ));
    };
    if let Some(origin) = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        && !state.config.allowed_origins.iter().any(|o| o == origin)
    {
        return Err(AppError::bad_request("Invalid request origin"));
    }
    // Token and message are prepared for every request, so a known account
    // costs what an unknown one does.
    let token = random_token();
    let hash = token_hash(&token);
    let subject = "Reset your password";
    let body = format!(
        "Someone asked to reset the password of your account.\n\n\
         Open this link within 60 minutes to choose a new password:\n{app_url}/reset/{token}\n\n\
         If it was not you, ignore this message."
    );
    let smtp = state.config.smtp_url.is_some();
    let mut conn = state.db.conn().await?;
    let recipient = service::store_reset_request(
        &mut conn,
        &service::ResetRequest {
            email: &email,
            token_hash: &hash,
            expires_at: OffsetDateTime::now_utc() + RESET_TTL,
            subject,
            body: &body,
            store_mail: !smtp,
        },
    )
    .await?;
    drop(conn);
    if smtp && let Some(to) = recipient {
        // SMTP takes as long as the remote server does: never inside the request.
        let mailer = state.mailer.clone();
        let mail = Mail {
            to,
            subject: subject.into(),
            body,
        };
        actix_web::rt::spawn(async move {
            if let Err(err) = mailer.send(mail).await {
                tracing::warn!(error = %err, "password reset e-mail not delivered");
            }
        });
    }
    Ok(HttpResponse::Ok().json(OkTrue { ok: true }))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ResetConfirmForm {
    pub token: Option<String>,
    pub password: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ResetConfirmed {
    pub ok: bool,
    pub redirect: String,
}

/// Sets a new password with a reset (or invitation) token; every session of
/// the user ends.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body(content = ResetConfirmForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, body = ResetConfirmed),
        (status = 400, body = ErrorBody, description = "`{ok:false,error}`: invalid token or payload"),
        (status = 429, body = ErrorBody),
    )
)]
#[post("/auth/reset/confirm")]
pub async fn confirm_reset(
    req: HttpRequest,
    state: State,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    let mut quota = None;
    let result = confirm(&req, &state, &body, &mut quota).await;
    Quota::attach(quota, result).map(no_store)
}

async fn confirm(
    req: &HttpRequest,
    state: &AuthState,
    body: &[u8],
    quota: &mut Option<Quota>,
) -> AppResult<HttpResponse> {
    const INVALID: &str = "Invalid request";
    let limits = &state.config.rate_limits;
    let ip = ip_of(req, state);
    *quota = Layers::new(&*state.limiter)
        .layer(format!("confirm:ip:{ip}"), limits.confirm_ip)
        .reserve()?;
    let form: ResetConfirmForm = parse_form(req, body, INVALID)?;
    let token = form.token.unwrap_or_default().trim().to_string();
    let password = form.password.unwrap_or_default();
    if token.len() < 10
        || token.len() > 512
        || password.is_empty()
        || password.len() > MAX_PASSWORD_LEN
    {
        return Err(AppError::bad_request(INVALID).ok_false());
    }
    match Layers::new(&*state.limiter)
        .layer(
            format!("confirm:token:{}", token_hash(&token)),
            limits.confirm_token,
        )
        .reserve()
    {
        Ok(Some(q)) => *quota = quota.map_or(Some(q), |p| Some(p.tighter(q))),
        Ok(None) => {}
        Err(limited) => {
            *quota = None;
            return Err(limited);
        }
    }
    state
        .config
        .password_policy
        .check(&password)
        .map_err(|m| AppError::bad_request(m).ok_false())?;
    let hash = hash_password(password).await?;
    let done = state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let Some(user) = service::consume_reset_token(conn, &token).await? else {
                    return Ok(false);
                };
                // Every other reset or invitation link of the user dies with
                // this one (a trigger does it for any password change too).
                crate::invite::invalidate_tokens(conn, user).await?;
                service::set_password_hash(conn, user, &hash).await?;
                service::delete_user_sessions(conn, user, None).await?;
                Ok(true)
            })
        })
        .await?;
    if !done {
        return Err(AppError::bad_request("Invalid or expired token").ok_false());
    }
    Ok(HttpResponse::Ok().json(ResetConfirmed {
        ok: true,
        redirect: "/login".into(),
    }))
}
