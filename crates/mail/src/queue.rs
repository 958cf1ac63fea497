//! Mail sent after commit: [`queue`] writes the message to the event outbox
//! in the caller's transaction, and [`MailSubscriber`] (one of the server's
//! outbox subscribers) hands it to the [`Mailer`] once the transaction
//! committed. A rolled-back transaction sends nothing; a failed delivery is
//! retried with the outbox's back-off (at least once: a retry after a send
//! whose success was not recorded sends again).

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use stoa_core::command::Event;
use stoa_core::command::outbox::{Delivered, Envelope, Origin, Origins, Subscriber, enqueue};
use uuid::Uuid;

use crate::{Mail, Mailer};

/// The outbox event carrying a message.
pub const MAIL_EVENT: &str = "mail.send";
/// The origin of queued mail: only [`queue`] writes it, and the subscriber
/// sends nothing else (an event named `mail.send` from anywhere else, such
/// as a business rule's `EMIT_EVENT`, is never sent).
pub const MAIL_ORIGIN: &str = "mail";

/// Queues `mail` on `conn` (the caller's transaction), for `tenant` when the
/// message belongs to one.
pub async fn queue(
    conn: &mut AsyncPgConnection,
    mail: &Mail,
    tenant: Option<Uuid>,
) -> Result<(), stoa_core::AppError> {
    let payload = serde_json::to_value(mail).map_err(stoa_core::AppError::internal)?;
    let event = Event {
        name: MAIL_EVENT.into(),
        payload,
    };
    let envelope = Envelope {
        origin: Origin::module(MAIL_ORIGIN),
        tenant_id: tenant,
        ..Default::default()
    };
    enqueue(conn, &event, &envelope).await?;
    Ok(())
}

/// Delivers queued messages through the process's [`Mailer`].
pub struct MailSubscriber {
    mailer: Arc<dyn Mailer>,
}

impl MailSubscriber {
    pub fn new(mailer: Arc<dyn Mailer>) -> Self {
        Self { mailer }
    }
}

impl Subscriber for MailSubscriber {
    fn id(&self) -> &str {
        "mail.send"
    }

    fn accepts(&self, name: &str) -> bool {
        name == MAIL_EVENT
    }

    fn origins(&self) -> Origins {
        Origins::Only(&[MAIL_ORIGIN])
    }

    fn handle<'a>(&'a self, event: &'a Delivered) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let mail: Mail = serde_json::from_value(event.payload.clone())
                .map_err(|e| format!("malformed queued mail: {e}"))?;
            self.mailer.send(mail).await.map_err(|e| e.to_string())
        })
    }
}
