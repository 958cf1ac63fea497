//! The e-mails onboarding sends, queued in the transaction that decides them
//! (`stoa_mail::queue`): they leave after commit, through the outbox.

use stoa_mail::Mail;

use crate::html::escape;

/// The verification e-mail with its link.
pub fn verification(to: &str, first_name: &str, organization: &str, link: &str) -> Mail {
    let text = format!(
        "Hello {first_name},\n\n\
         Confirm your e-mail address to create the workspace \"{organization}\":\n\n\
         {link}\n\n\
         The link is valid for 24 hours and can be used once. If you did not sign up, \
         ignore this message: nothing is created without it.\n"
    );
    let html = format!(
        "<p>Hello {name},</p>\
         <p>Confirm your e-mail address to create the workspace &quot;{org}&quot;:</p>\
         <p><a href=\"{href}\">Confirm and create my workspace</a></p>\
         <p>The link is valid for 24 hours and can be used once. If you did not sign up, \
         ignore this message: nothing is created without it.</p>",
        name = escape(first_name),
        org = escape(organization),
        href = escape(link),
    );
    Mail::text(to, "Confirm your e-mail to create your workspace", text).with_html(html)
}

/// What a sign-up with an e-mail that already has an account sends instead:
/// the answer to the form is the same, only the owner of the address learns
/// that the account exists.
pub fn account_exists(to: &str, login_url: &str) -> Mail {
    let text = format!(
        "Hello,\n\n\
         Someone (probably you) tried to sign up with this e-mail address, which already \
         has an account. Sign in instead, or reset your password if you forgot it:\n\n\
         {login_url}\n\n\
         If it was not you, ignore this message.\n"
    );
    let html = format!(
        "<p>Hello,</p>\
         <p>Someone (probably you) tried to sign up with this e-mail address, which already \
         has an account. Sign in instead, or reset your password if you forgot it:</p>\
         <p><a href=\"{href}\">Sign in</a></p>\
         <p>If it was not you, ignore this message.</p>",
        href = escape(login_url),
    );
    Mail::text(to, "You already have an account", text).with_html(html)
}
