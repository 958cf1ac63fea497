//! Invitations: a user who has no password yet gets a link to choose one.
//! Resending one invalidates every earlier unused reset or invitation token
//! of the user and issues a new one, valid 48 hours.

use std::time::Duration;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::queries::{self, UserRow};
use crate::schema::password_resets;

/// The resource kind of users in the action log.
const USER_KIND: &str = "auth.user";

/// Invitation links are valid for 48 hours.
pub const INVITE_TTL: Duration = Duration::from_secs(48 * 3600);

/// Marks every unused token of `user` used; returns how many there were.
pub async fn invalidate_tokens(conn: &mut AsyncPgConnection, user: Uuid) -> QueryResult<usize> {
    diesel::update(
        password_resets::table
            .filter(password_resets::user_id.eq(user))
            .filter(password_resets::used_at.is_null()),
    )
    .set(password_resets::used_at.eq(OffsetDateTime::now_utc()))
    .execute(conn)
    .await
}

/// Issues a new invitation token for a user without a password (logged as
/// `auth.users.resend_invite`, not undoable). The output is the raw token; it
/// never enters the action log.
pub struct ResendInvite {
    pub user: UserRow,
}

impl Command for ResendInvite {
    type Output = String;
    fn id(&self) -> &'static str {
        "auth.users.resend_invite"
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(String, LogEntry), AppError>> {
        Box::pin(async move {
            let user = self.user;
            let invalidated = invalidate_tokens(conn, user.id).await?;
            let token = queries::create_reset_token(conn, user.id, "invite", INVITE_TTL).await?;
            let entry = LogEntry {
                action_label: Some("Resend invitation".into()),
                resource_kind: Some(USER_KIND.into()),
                resource_id: Some(user.id.to_string()),
                snapshot_after: Some(json!({"id": user.id, "email": user.email})),
                context: Some(json!({
                    "invalidatedTokens": invalidated,
                    "validHours": INVITE_TTL.as_secs() / 3600,
                })),
                tenant_id: user.tenant_id,
                organization_id: user.organization_id,
                ..Default::default()
            }
            .with_event("auth.user.invite_resent", json!({ "id": user.id }));
            Ok((token, entry))
        })
    }
}

/// Mails an invitation link to `email`; `Some("invite_email_failed")` when it
/// could not be sent (the token stays valid, the caller can resend).
pub async fn send_invitation(
    state: &crate::state::AuthState,
    app_url: &str,
    email: &str,
    token: &str,
) -> Option<&'static str> {
    let hours = INVITE_TTL.as_secs() / 3600;
    let app_url = app_url.trim_end_matches('/');
    let mail = stoa_mail::Mail {
        to: email.to_string(),
        subject: "You have been invited".into(),
        body: format!(
            "An administrator has created an account for you.\n\n\
             Open this link within {hours} hours to choose your password:\n{app_url}/reset/{token}\n\n\
             If you did not expect this invitation, ignore this message."
        ),
        html: None,
    };
    match state.mailer.send(mail).await {
        Ok(()) => None,
        Err(err) => {
            tracing::warn!(error = %err, "invitation e-mail not delivered");
            Some("invite_email_failed")
        }
    }
}
