//! Reading a response while the handler is still producing it: raw chunks or
//! server-sent-event frames, each with a timeout. Dropping the
//! [`StreamingResponse`] drops the body, which is what actix does when a real
//! client disconnects.

use std::pin::Pin;
use std::time::Duration;

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::http::StatusCode;
use actix_web::http::header::HeaderMap;
use actix_web::web::{Bytes, BytesMut};

/// Why no chunk or frame came.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEnd {
    /// Nothing arrived within the timeout (the stream is still open).
    TimedOut,
    /// The body ended.
    Closed,
    /// The body failed.
    Failed(String),
}

/// One frame of an event stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseFrame {
    /// A comment line (`: keep-alive`), without the colon and leading space.
    Comment(String),
    Event(SseMessage),
}

/// An event: its `event`, `id`, `retry` fields and its data lines joined by `\n`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseMessage {
    pub event: Option<String>,
    pub id: Option<String>,
    pub retry: Option<u64>,
    pub data: String,
}

impl SseMessage {
    /// The data as JSON (panics with the data when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.data)
            .unwrap_or_else(|err| panic!("event data is not JSON ({err}): {}", self.data))
    }
}

/// A response whose body is read incrementally.
pub struct StreamingResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    body: Pin<Box<BoxBody>>,
    /// Bytes read but not yet returned as a frame.
    pending: BytesMut,
    ended: bool,
}

impl StreamingResponse {
    pub(crate) fn new(status: StatusCode, headers: HeaderMap, body: BoxBody) -> Self {
        Self {
            status,
            headers,
            body: Box::pin(body),
            pending: BytesMut::new(),
            ended: false,
        }
    }

    /// The body's declared size (`Sized(n)` is what becomes `Content-Length`
    /// on the wire; the in-process response carries no such header).
    pub fn body_size(&self) -> BodySize {
        self.body.size()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The next chunk the body yields, waiting at most `timeout`.
    pub async fn next_chunk(&mut self, timeout: Duration) -> Result<Bytes, StreamEnd> {
        if !self.pending.is_empty() {
            return Ok(self.pending.split().freeze());
        }
        self.read_chunk(timeout).await
    }

    async fn read_chunk(&mut self, timeout: Duration) -> Result<Bytes, StreamEnd> {
        if self.ended {
            return Err(StreamEnd::Closed);
        }
        let body = &mut self.body;
        let next = std::future::poll_fn(|cx| body.as_mut().poll_next(cx));
        match tokio::time::timeout(timeout, next).await {
            Err(_) => Err(StreamEnd::TimedOut),
            Ok(None) => {
                self.ended = true;
                Err(StreamEnd::Closed)
            }
            Ok(Some(Err(err))) => {
                self.ended = true;
                Err(StreamEnd::Failed(err.to_string()))
            }
            Ok(Some(Ok(bytes))) => Ok(bytes),
        }
    }

    /// The next event-stream frame (an event or a comment), waiting at most
    /// `timeout` in all.
    pub async fn next_frame(&mut self, timeout: Duration) -> Result<SseFrame, StreamEnd> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(frame) = self.take_frame() {
                return Ok(frame);
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Err(StreamEnd::TimedOut);
            }
            let chunk = self.read_chunk(left).await?;
            self.pending.extend_from_slice(&chunk);
        }
    }

    /// The next event, skipping comments, waiting at most `timeout` in all.
    pub async fn next_event(&mut self, timeout: Duration) -> Result<SseMessage, StreamEnd> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if let SseFrame::Event(event) = self.next_frame(left).await? {
                return Ok(event);
            }
        }
    }

    /// What the body holds by `timeout`: everything when it ends sooner, else
    /// what arrived until then (an event stream never ends by itself).
    pub async fn read_for(&mut self, timeout: Duration) -> Bytes {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut out = BytesMut::from(&self.pending.split()[..]);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.read_chunk(left).await {
                Ok(chunk) => out.extend_from_slice(&chunk),
                Err(_) => return out.freeze(),
            }
        }
    }

    /// Everything until the body ends (panics if it does not end within `timeout`).
    pub async fn read_to_end(&mut self, timeout: Duration) -> Bytes {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut out = BytesMut::from(&self.pending.split()[..]);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.read_chunk(left).await {
                Ok(chunk) => out.extend_from_slice(&chunk),
                Err(StreamEnd::Closed) => return out.freeze(),
                Err(end) => panic!("the body did not end: {end:?}"),
            }
        }
    }

    /// Splits one complete frame (up to a blank line) off the pending bytes.
    fn take_frame(&mut self) -> Option<SseFrame> {
        loop {
            let end = frame_end(&self.pending)?;
            let raw = self.pending.split_to(end.0);
            let _ = self.pending.split_to(end.1);
            let text = String::from_utf8_lossy(&raw);
            if let Some(frame) = parse_frame(&text) {
                return Some(frame);
            }
        }
    }
}

/// Where the first frame ends: (length of the frame, length of the separator).
fn frame_end(buf: &[u8]) -> Option<(usize, usize)> {
    let text = buf;
    let mut i = 0;
    while i < text.len() {
        for sep in [&b"\r\n\r\n"[..], b"\n\n", b"\r\r"] {
            if text[i..].starts_with(sep) {
                return Some((i, sep.len()));
            }
        }
        i += 1;
    }
    None
}

/// Parses the lines of one frame; `None` for a frame with nothing in it.
fn parse_frame(text: &str) -> Option<SseFrame> {
    let mut message = SseMessage::default();
    let mut data: Vec<&str> = Vec::new();
    let mut comment: Option<String> = None;
    for line in text.split(['\n', '\r']).filter(|l| !l.is_empty()) {
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "" => {
                comment.get_or_insert(value.to_string());
            }
            "data" => data.push(value),
            "event" => message.event = Some(value.to_string()),
            "id" => message.id = Some(value.to_string()),
            "retry" => message.retry = value.parse().ok(),
            _ => {}
        }
    }
    if data.is_empty() && message.event.is_none() && message.id.is_none() {
        return comment.map(SseFrame::Comment);
    }
    message.data = data.join("\n");
    Some(SseFrame::Event(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_parsed() {
        assert_eq!(
            parse_frame(": keep-alive"),
            Some(SseFrame::Comment("keep-alive".into()))
        );
        assert_eq!(
            parse_frame("event: x\nid: 3\nretry: 10\ndata: a\ndata: b"),
            Some(SseFrame::Event(SseMessage {
                event: Some("x".into()),
                id: Some("3".into()),
                retry: Some(10),
                data: "a\nb".into(),
            }))
        );
        assert_eq!(frame_end(b"data: a\n\ndata: b"), Some((7, 2)));
        assert_eq!(frame_end(b"data: a\n"), None);
    }
}
