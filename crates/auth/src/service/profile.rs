//! Saving a profile change.

use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::command::Operation;
use stoa_mail::Mail;

use crate::commands::UpdateProfileCommand;
use crate::state::AuthState;

/// Runs the (logged, not undoable) profile command in its own transaction
/// and, when the e-mail changed, tells the old address.
pub async fn save(
    state: &AuthState,
    ctx: &AuthContext,
    command: UpdateProfileCommand,
    old_email: &str,
) -> AppResult<Operation> {
    let new_email = command.email.clone();
    let actor = ctx.actor();
    let (_, op) = stoa_core::command::run(&state.db, &actor, command).await?;
    if new_email != old_email {
        notify_email_change(state, old_email, &new_email).await;
    }
    Ok(op)
}

/// Tells the old address that the account's e-mail changed, so an owner whose
/// session was misused learns of it. A failed delivery does not undo the change.
pub(crate) async fn notify_email_change(state: &AuthState, old: &str, new: &str) {
    let mail = Mail {
        to: old.to_string(),
        subject: "Your e-mail address was changed".into(),
        body: format!(
            "The e-mail address of your account was changed from {old} to {new}.\n\n\
             If you did not do this, contact your administrator at once: password \
             reset links now go to the new address."
        ),
        html: None,
    };
    if let Err(err) = state.mailer.send(mail).await {
        tracing::warn!(error = %err, "e-mail change notice not delivered");
    }
}
