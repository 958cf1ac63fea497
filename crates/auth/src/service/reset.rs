//! Password reset: storing a request and confirming it.

use actix_web::web;
use stoa_core::{AppError, AppResult};
use stoa_mail::Mail;
use time::OffsetDateTime;

use crate::queries;
use crate::state::AuthState;
use crate::tokens::{random_token, token_hash};

/// Reset links are valid for an hour.
const RESET_TTL: std::time::Duration = std::time::Duration::from_secs(3600);

/// Queues the reset request of `email` behind the answer
/// ([`stoa_core::behind`]): the client learns nothing from how long the
/// lookup and the writes take. A failure is logged; the client already has
/// its `{ok:true}` and can ask again.
pub fn request_behind(state: &web::Data<AuthState>, app_url: String, email: String) {
    let state = state.clone();
    state.db.behind().clone().spawn(async move {
        if let Err(err) = request(&state, &app_url, &email).await {
            tracing::error!(error = %err, "password reset request not stored");
        }
    });
}

/// Stores a reset token and its message for the account of `email`, if there
/// is one, in one statement; with SMTP then sends the message.
async fn request(state: &AuthState, app_url: &str, email: &str) -> AppResult<()> {
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
    let recipient = queries::store_reset_request(
        &mut conn,
        &queries::ResetRequest {
            email,
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
        let mail = Mail {
            to,
            subject: subject.into(),
            body,
            html: None,
        };
        if let Err(err) = state.mailer.send(mail).await {
            tracing::warn!(error = %err, "password reset e-mail not delivered");
        }
    }
    Ok(())
}

/// Uses the reset (or invitation) token and sets the new password hash in
/// one transaction; every session of the user ends. `false` when the token is
/// unknown, used or expired.
pub async fn confirm(state: &AuthState, token: String, hash: String) -> AppResult<bool> {
    state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let Some(user) = queries::consume_reset_token(conn, &token).await? else {
                    return Ok(false);
                };
                // Every other reset or invitation link of the user dies with
                // this one (a trigger does it for any password change too).
                crate::invite::invalidate_tokens(conn, user).await?;
                queries::set_password_hash(conn, user, &hash).await?;
                queries::delete_user_sessions(conn, user, None).await?;
                Ok(true)
            })
        })
        .await
}
