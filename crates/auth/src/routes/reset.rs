use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, post, web};
use serde::{Deserialize, Serialize};
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};
use stoa_mail::Mail;
use utoipa::ToSchema;

use super::{State, ip_of, parse_form};
use crate::password::{MAX_PASSWORD_LEN, hash_password};
use crate::service::{self, normalize_email};
use crate::tokens::token_hash;

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
/// the account exists.
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
    let form: ResetForm = parse_form(&req, &body, "Invalid email")?;
    let email = normalize_email(form.email.as_deref().unwrap_or(""));
    let limits = &state.config.rate_limits;
    let ip = ip_of(&req, &state);
    state
        .limiter
        .record(&format!("reset:ip:{ip}"), &limits.reset_ip)
        .into_result()?;
    if email.len() > 254
        || !email
            .split_once('@')
            .is_some_and(|(l, d)| !l.is_empty() && d.contains('.'))
    {
        return Err(AppError::bad_request("Invalid email").ok_false());
    }
    state
        .limiter
        .record(&format!("reset:account:{email}"), &limits.reset_account)
        .into_result()?;
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
    let mut conn = state.db.conn().await?;
    if let Some(user) = service::first_user_by_email(&mut conn, &email).await? {
        let token = service::create_reset_token(&mut conn, user.id, "reset", RESET_TTL).await?;
        let mail = Mail {
            to: user.email.clone(),
            subject: "Reset your password".into(),
            body: format!(
                "Someone asked to reset the password of your account.\n\n\
                 Open this link within 60 minutes to choose a new password:\n{app_url}/reset/{token}\n\n\
                 If it was not you, ignore this message."
            ),
        };
        if let Err(err) = state.mailer.send(mail).await {
            // The answer stays the same: it must not reveal the account exists.
            tracing::warn!(error = %err, "password reset e-mail not delivered");
        }
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
    const INVALID: &str = "Invalid request";
    let form: ResetConfirmForm = parse_form(&req, &body, INVALID)?;
    let limits = &state.config.rate_limits;
    let ip = ip_of(&req, &state);
    state
        .limiter
        .record(&format!("confirm:ip:{ip}"), &limits.confirm_ip)
        .into_result()?;
    let token = form.token.unwrap_or_default().trim().to_string();
    let password = form.password.unwrap_or_default();
    if token.len() < 10
        || token.len() > 512
        || password.is_empty()
        || password.len() > MAX_PASSWORD_LEN
    {
        return Err(AppError::bad_request(INVALID).ok_false());
    }
    state
        .limiter
        .record(
            &format!("confirm:token:{}", token_hash(&token)),
            &limits.confirm_token,
        )
        .into_result()?;
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
