//! Server-sent events (`text/event-stream`).
//!
//! A handler returns an [`Sse`]: a response whose body streams the events a
//! producer sends through an [`SseSender`], one frame as soon as it is sent.
//!
//! ```ignore
//! async fn events(ctx: AuthContext) -> Result<Sse, AppError> {
//!     ctx.require("example.view")?;
//!     Ok(Sse::spawn(move |tx| async move {
//!         let mut n = 0;
//!         loop {
//!             n += 1;
//!             // `Err` once the client is gone: stop working.
//!             if tx.send(SseEvent::data(n.to_string())).await.is_err() {
//!                 break;
//!             }
//!             tokio::time::sleep(Duration::from_secs(1)).await;
//!         }
//!     }))
//! }
//! ```
//!
//! - **Keep-alive.** While no event is sent, a comment frame (`: keep-alive`)
//!   goes out every interval ([`SseKeepAlive`], `STOA_SSE_KEEP_ALIVE_SECS`,
//!   default 15 s; per response with [`Sse::keep_alive`]). It keeps proxies from
//!   closing an idle connection, and writing is also how the server notices a
//!   client that went away.
//! - **Disconnect.** When the client disconnects, actix drops the response body:
//!   the channel closes (`send` fails, [`SseSender::closed`] resolves) and a
//!   producer started with [`Sse::spawn`] is aborted at its next await point.
//! - **Headers.** `Content-Type: text/event-stream`, `Cache-Control: no-cache`,
//!   `X-Accel-Buffering: no` (nginx would buffer otherwise), and no compression:
//!   the app-wide `Compress` middleware buffers a streamed body until it has
//!   enough to compress, which would hold events back ([`super::compression`]).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{BodySize, MessageBody};
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, Responder};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, Interval, MissedTickBehavior};

use super::compression::no_compression;
use crate::error::AppError;

/// The default keep-alive interval of event streams (`STOA_SSE_KEEP_ALIVE_SECS`).
pub const DEFAULT_SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Events buffered between a producer and a slow client before `send` waits.
const CHANNEL_CAPACITY: usize = 16;

/// The keep-alive interval of event streams, as app data (registered by
/// [`super::app`] from `HttpConfig::sse_keep_alive`).
#[derive(Clone, Copy, Debug)]
pub struct SseKeepAlive(pub Duration);

/// One event: optional `event:` name, `id:` and `retry:`, and its data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    event: Option<String>,
    id: Option<String>,
    retry: Option<Duration>,
    data: String,
}

impl SseEvent {
    /// An event carrying `data` (several lines become several `data:` lines).
    pub fn data(data: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            ..Self::default()
        }
    }

    /// An event carrying `value` as JSON.
    pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> Result<Self, AppError> {
        serde_json::to_string(value)
            .map(Self::data)
            .map_err(|err| AppError::internal(format!("cannot serialize an event: {err}")))
    }

    /// Names the event (`event: <name>`; the client's `addEventListener(name)`).
    pub fn event(mut self, name: impl Into<String>) -> Self {
        self.event = Some(single_line(name.into()));
        self
    }

    /// Sets the event id (sent back by a reconnecting browser as `Last-Event-ID`).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(single_line(id.into()));
        self
    }

    /// Tells the client how long to wait before reconnecting.
    pub fn retry(mut self, after: Duration) -> Self {
        self.retry = Some(after);
        self
    }

    /// The frame on the wire, ending with the blank line that dispatches it.
    pub fn to_bytes(&self) -> Bytes {
        let mut out = String::with_capacity(self.data.len() + 16);
        if let Some(event) = &self.event {
            out.push_str("event: ");
            out.push_str(event);
            out.push('\n');
        }
        if let Some(id) = &self.id {
            out.push_str("id: ");
            out.push_str(id);
            out.push('\n');
        }
        if let Some(retry) = self.retry {
            out.push_str(&format!("retry: {}\n", retry.as_millis()));
        }
        // CRLF, LF and CR all end a line in an event stream.
        for line in self.data.replace("\r\n", "\n").split(['\n', '\r']) {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
        Bytes::from(out)
    }
}

/// A field value that cannot break out of its line.
fn single_line(value: String) -> String {
    if value.contains(['\n', '\r']) {
        value.replace(['\n', '\r'], " ")
    } else {
        value
    }
}

/// The client went away (the response body was dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the client disconnected")]
pub struct Disconnected;

/// The producing end of an event stream.
#[derive(Clone, Debug)]
pub struct SseSender(mpsc::Sender<SseEvent>);

impl SseSender {
    /// Queues `event`; waits while the client is slower than the producer.
    /// `Err(Disconnected)` once the client is gone: the producer should stop.
    pub async fn send(&self, event: SseEvent) -> Result<(), Disconnected> {
        self.0.send(event).await.map_err(|_| Disconnected)
    }

    /// Resolves when the client is gone (for producers that wait on something
    /// else between events: `tokio::select!` on both).
    pub async fn closed(&self) {
        self.0.closed().await;
    }

    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

/// An event-stream response (implements `Responder`).
pub struct Sse {
    rx: mpsc::Receiver<SseEvent>,
    keep_alive: Option<Duration>,
    producer: Option<AbortOnDrop>,
}

impl Sse {
    /// A stream fed through the returned sender (from any task or thread).
    pub fn channel() -> (SseSender, Self) {
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        let sse = Self {
            rx,
            keep_alive: None,
            producer: None,
        };
        (SseSender(tx), sse)
    }

    /// A stream fed by `producer`, spawned on the current worker; it is
    /// aborted when the client disconnects (or the stream is dropped unsent).
    pub fn spawn<F, Fut>(producer: F) -> Self
    where
        F: FnOnce(SseSender) -> Fut,
        Fut: Future<Output = ()> + 'static,
    {
        let (tx, mut sse) = Self::channel();
        // The producer keeps the row-level security scope of its request.
        let scope = crate::rls::current();
        sse.producer = Some(AbortOnDrop(actix_web::rt::spawn(crate::rls::within(
            scope,
            producer(tx),
        ))));
        sse
    }

    /// Overrides the app's keep-alive interval for this response.
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.keep_alive = Some(interval);
        self
    }
}

impl Responder for Sse {
    type Body = SseBody;

    fn respond_to(self, req: &HttpRequest) -> HttpResponse<SseBody> {
        let interval = self
            .keep_alive
            .or_else(|| req.app_data::<SseKeepAlive>().map(|k| k.0))
            .unwrap_or(DEFAULT_SSE_KEEP_ALIVE)
            .max(Duration::from_millis(1));
        let mut ticker = tokio::time::interval_at(Instant::now() + interval, interval);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut builder = HttpResponse::Ok();
        builder
            .insert_header((
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ))
            .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
            .insert_header(("x-accel-buffering", HeaderValue::from_static("no")));
        no_compression(&mut builder);
        builder
            .message_body(SseBody {
                rx: self.rx,
                ticker,
                _producer: self.producer,
            })
            .unwrap_or_else(|err| {
                // Building from static, valid headers cannot fail; answer 500 if it ever does.
                HttpResponse::from_error(err).set_body(SseBody::ended())
            })
    }
}

/// The body of an [`Sse`] response: events as they arrive, keep-alive
/// comments while idle, end when every sender is gone.
pub struct SseBody {
    rx: mpsc::Receiver<SseEvent>,
    ticker: Interval,
    _producer: Option<AbortOnDrop>,
}

impl SseBody {
    fn ended() -> Self {
        let (_, rx) = mpsc::channel(1);
        Self {
            rx,
            ticker: tokio::time::interval(DEFAULT_SSE_KEEP_ALIVE),
            _producer: None,
        }
    }
}

impl MessageBody for SseBody {
    type Error = std::convert::Infallible;

    fn size(&self) -> BodySize {
        BodySize::Stream
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let this = self.get_mut();
        match this.rx.poll_recv(cx) {
            Poll::Ready(Some(event)) => {
                // The stream is not idle: the next comment is a full interval away.
                this.ticker.reset();
                return Poll::Ready(Some(Ok(event.to_bytes())));
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        match this.ticker.poll_tick(cx) {
            Poll::Ready(_) => Poll::Ready(Some(Ok(Bytes::from_static(b": keep-alive\n\n")))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Aborts the producer task when the body is dropped (the client disconnected).
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_follow_the_event_stream_format() {
        let frame = SseEvent::data("a\nb\r\nc")
            .event("progress")
            .id("7")
            .retry(Duration::from_secs(2))
            .to_bytes();
        assert_eq!(
            frame,
            "event: progress\nid: 7\nretry: 2000\ndata: a\ndata: b\ndata: c\n\n"
        );
        assert_eq!(SseEvent::data("").to_bytes(), "data: \n\n");
        let forged = SseEvent::data("x").event("a\ndata: evil").to_bytes();
        assert_eq!(forged, "event: a data: evil\ndata: x\n\n");
    }

    #[test]
    fn json_events_are_one_line() {
        let frame = SseEvent::json(&serde_json::json!({"n": 1, "s": "x\ny"}))
            .unwrap_or_default()
            .to_bytes();
        assert_eq!(frame, "data: {\"n\":1,\"s\":\"x\\ny\"}\n\n");
    }
}
