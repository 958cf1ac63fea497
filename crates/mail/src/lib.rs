//! stoa-mail: sending e-mail (password reset links, invitations).
//!
//! With `SMTP_URL` set (e.g. `smtps://user:pass@smtp.example.com:465` or
//! `smtp://localhost:2525`), messages go out through lettre's async SMTP
//! transport. Without it, each message is stored in the `mail_outbox` table and
//! logged, so development setups and tests can read the links. Either way every
//! message is recorded in `mail_outbox` with its delivery status.
#![doc = include_str!("../README.md")]

use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;
use lettre::message::{Mailbox, MultiPart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use stoa_core::db::Db;

diesel::table! {
    mail_outbox (id) {
        id -> Uuid,
        recipient -> Text,
        subject -> Text,
        body -> Text,
        status -> Text,
        error -> Nullable<Text>,
        created_at -> Timestamptz,
        html -> Nullable<Text>,
    }
}

/// The statement that stores one message in `mail_outbox` as delivered by
/// the outbox mailer, as SQL text for another module's data-modifying CTE:
/// `INSERT ... SELECT <recipient>, <subject>, <body>, 'stored' FROM <source>
/// WHERE <condition>`, each argument an SQL expression of the caller's
/// statement (a column, a `$n` parameter). The password-reset request stores
/// its token and its message in one statement whether or not the account
/// exists (the same work either way); the table's SQL stays here, with its
/// owner.
pub fn store_select_sql(
    recipient: &str,
    subject: &str,
    body: &str,
    source: &str,
    condition: &str,
) -> String {
    format!(
        "INSERT INTO mail_outbox (recipient, subject, body, status) \
         SELECT {recipient}, {subject}, {body}, 'stored' FROM {source} WHERE {condition}"
    )
}

/// One message: a text body, and optionally an HTML one (sent as
/// `multipart/alternative`, text first).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    /// The text body.
    pub body: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
}

impl Mail {
    /// A text-only message.
    pub fn text(
        to: impl Into<String>,
        subject: impl Into<String>,
        body: impl Into<String>,
    ) -> Self {
        Self {
            to: to.into(),
            subject: subject.into(),
            body: body.into(),
            html: None,
        }
    }

    /// The same message with an HTML body beside the text one.
    pub fn with_html(mut self, html: impl Into<String>) -> Self {
        self.html = Some(html.into());
        self
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("invalid SMTP_URL: {0}")]
    Config(String),
    #[error("cannot send mail: {0}")]
    Send(String),
}

pub mod queue;

pub use queue::{MAIL_EVENT, MailSubscriber, queue};

/// Something that delivers mail.
pub trait Mailer: Send + Sync {
    fn send<'a>(&'a self, mail: Mail) -> BoxFuture<'a, Result<(), MailError>>;
}

/// Builds the mailer the environment asks for.
pub fn mailer(db: Db, smtp_url: Option<&str>, from: &str) -> Result<Arc<dyn Mailer>, MailError> {
    match smtp_url {
        Some(url) => Ok(Arc::new(SmtpMailer::new(db, url, from)?)),
        None => Ok(Arc::new(OutboxMailer { db })),
    }
}

async fn record(
    db: &Db,
    mail: &Mail,
    status: &str,
    error: Option<String>,
) -> Result<(), MailError> {
    let mut conn = db
        .conn()
        .await
        .map_err(|e| MailError::Send(e.to_string()))?;
    diesel::insert_into(mail_outbox::table)
        .values((
            mail_outbox::recipient.eq(&mail.to),
            mail_outbox::subject.eq(&mail.subject),
            mail_outbox::body.eq(&mail.body),
            mail_outbox::html.eq(&mail.html),
            mail_outbox::status.eq(status),
            mail_outbox::error.eq(error),
        ))
        .execute(&mut *conn)
        .await
        .map(|_| ())
        .map_err(|e| MailError::Send(e.to_string()))
}

/// Stores messages in `mail_outbox` and logs them.
pub struct OutboxMailer {
    db: Db,
}

impl OutboxMailer {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

impl Mailer for OutboxMailer {
    fn send<'a>(&'a self, mail: Mail) -> BoxFuture<'a, Result<(), MailError>> {
        Box::pin(async move {
            tracing::info!(mail.to = %mail.to, mail.subject = %mail.subject, "mail stored in mail_outbox (no SMTP_URL)");
            record(&self.db, &mail, "stored", None).await
        })
    }
}

/// The longest one message may take to go out through SMTP (connection,
/// greeting, every command). A mail server that hangs costs a request at
/// most this long (lettre's default is 60 s for each step).
///
/// lettre's connection pool is not used (the `pool` feature is off): its
/// drop spawns a task and panicked when the server stopped outside the
/// runtime; one connection per message suits the mail stoa sends.
pub const SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Sends through SMTP and records the outcome.
pub struct SmtpMailer {
    db: Db,
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl SmtpMailer {
    pub fn new(db: Db, url: &str, from: &str) -> Result<Self, MailError> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| MailError::Config(e.to_string()))?
            .timeout(Some(SEND_TIMEOUT))
            .build();
        let from = from.parse().map_err(|e: lettre::address::AddressError| {
            MailError::Config(format!("MAIL_FROM: {e}"))
        })?;
        Ok(Self {
            db,
            transport,
            from,
        })
    }
}

impl Mailer for SmtpMailer {
    fn send<'a>(&'a self, mail: Mail) -> BoxFuture<'a, Result<(), MailError>> {
        Box::pin(async move {
            let to: Mailbox = mail
                .to
                .parse()
                .map_err(|e: lettre::address::AddressError| MailError::Send(e.to_string()))?;
            let builder = Message::builder()
                .from(self.from.clone())
                .to(to)
                .subject(&mail.subject);
            let message = match &mail.html {
                Some(html) => builder.multipart(MultiPart::alternative_plain_html(
                    mail.body.clone(),
                    html.clone(),
                )),
                None => builder.body(mail.body.clone()),
            }
            .map_err(|e| MailError::Send(e.to_string()))?;
            // lettre's own timeout bounds each step; this bounds the whole
            // exchange (a server that answers slowly step by step).
            let sent = match tokio::time::timeout(SEND_TIMEOUT, self.transport.send(message)).await
            {
                Ok(result) => result.map(|_| ()).map_err(|e| e.to_string()),
                Err(_) => Err(format!(
                    "the SMTP server did not finish within {} s",
                    SEND_TIMEOUT.as_secs()
                )),
            };
            match sent {
                Ok(()) => record(&self.db, &mail, "sent", None).await,
                Err(err) => {
                    tracing::warn!(mail.to = %mail.to, error = %err, "SMTP delivery failed");
                    let _ = record(&self.db, &mail, "failed", Some(err.to_string())).await;
                    Err(MailError::Send(err.to_string()))
                }
            }
        })
    }
}
