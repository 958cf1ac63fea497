//! Sending a request and reading its response within the size bound and the
//! timeouts: whole ([`OutboundRequest::send`], [`OutboundRequest::send_json`])
//! or as it arrives ([`OutboundRequest::send_streaming`]).

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::stream::BoxStream;
use futures_util::{Stream, StreamExt};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{RequestBuilder, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::time::Instant;
use tracing::Instrument;

use super::OutboundError;
use super::signing::WebhookSigner;

/// The bounds a request runs under (the client's, narrowed per request).
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub(super) max_response_bytes: usize,
    pub(super) first_byte_timeout: Duration,
    pub(super) idle_timeout: Duration,
    /// The whole exchange, when the caller wants one.
    pub(super) deadline: Option<Duration>,
}

/// A request being built; [`OutboundRequest::send`] sends it and reads the
/// bounded response.
#[derive(Debug)]
pub struct OutboundRequest {
    builder: RequestBuilder,
    limits: Limits,
    body: Option<(Bytes, &'static str)>,
    body_error: Option<String>,
    signature: Option<(WebhookSigner, String)>,
}

impl OutboundRequest {
    pub(super) fn new(builder: RequestBuilder, limits: Limits) -> Self {
        Self {
            builder,
            limits,
            body: None,
            body_error: None,
            signature: None,
        }
    }

    /// Adjusts the request (headers, auth) with reqwest's builder. Set the
    /// body with [`json`](Self::json) or [`body`](Self::body), so a signature
    /// covers it.
    pub fn with(mut self, f: impl FnOnce(RequestBuilder) -> RequestBuilder) -> Self {
        self.builder = f(self.builder);
        self
    }

    pub fn header(self, name: &str, value: &str) -> Self {
        self.with(|b| b.header(name, value))
    }

    /// A JSON body from any serializable value (a typed request struct).
    pub fn json<T: Serialize + ?Sized>(mut self, body: &T) -> Self {
        match serde_json::to_vec(body) {
            Ok(bytes) => self.body = Some((bytes.into(), "application/json")),
            Err(err) => self.body_error = Some(err.to_string()),
        }
        self
    }

    /// A raw body with its content type.
    pub fn body(mut self, bytes: impl Into<Bytes>, content_type: &'static str) -> Self {
        self.body = Some((bytes.into(), content_type));
        self
    }

    /// Signs the body as a webhook delivery `id` (the receiver's idempotency
    /// key): `webhook-id`, `webhook-timestamp` (now) and `webhook-signature`
    /// headers, see [`super::signing`].
    pub fn sign_webhook(mut self, signer: &WebhookSigner, id: impl Into<String>) -> Self {
        self.signature = Some((signer.clone(), id.into()));
        self
    }

    /// A lower response bound than the configured one for this request.
    pub fn max_response_bytes(mut self, limit: usize) -> Self {
        self.limits.max_response_bytes = self.limits.max_response_bytes.min(limit);
        self
    }

    /// Another wait for the response head than the configured one.
    pub fn first_byte_timeout(mut self, timeout: Duration) -> Self {
        self.limits.first_byte_timeout = timeout;
        self
    }

    /// Another longest pause between body chunks than the configured one.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.limits.idle_timeout = timeout;
        self
    }

    /// A bound on the whole exchange, head and body (a webhook that must not
    /// hold a worker however slowly the remote trickles bytes).
    pub fn deadline(mut self, total: Duration) -> Self {
        self.limits.deadline = Some(total);
        self
    }

    /// Sends the request and returns once the response head arrived (within
    /// the first-byte timeout); the body is read from the returned stream.
    /// A declared `Content-Length` past the bound fails here.
    pub async fn send_streaming(self) -> Result<OutboundStream, OutboundError> {
        if let Some(err) = self.body_error {
            return Err(OutboundError::InvalidBody(err));
        }
        let limits = self.limits;
        let deadline = limits.deadline.map(|total| Instant::now() + total);
        let mut builder = self.builder;
        if let Some((signer, id)) = &self.signature {
            let timestamp = time::OffsetDateTime::now_utc().unix_timestamp();
            let signed: &[u8] = self.body.as_ref().map_or(b"", |(bytes, _)| bytes);
            for (name, value) in signer.headers(id, timestamp, signed) {
                builder = builder.header(name, value);
            }
        }
        if let Some((bytes, content_type)) = self.body {
            builder = builder
                .header(CONTENT_TYPE, HeaderValue::from_static(content_type))
                .body(bytes);
        }
        let wait = bounded(limits.first_byte_timeout, deadline);
        let (builder, span) =
            crate::traces::outbound::start(builder).map_err(OutboundError::from_reqwest)?;
        let response = tokio::time::timeout(wait, builder.send().instrument(span.clone()))
            .await
            .map_err(|_| OutboundError::Timeout)?
            .map_err(OutboundError::from_reqwest)?;
        crate::traces::outbound::finish(&span, response.status().as_u16());
        let limit = limits.max_response_bytes;
        if response
            .content_length()
            .is_some_and(|len| len > limit as u64)
        {
            return Err(OutboundError::TooLarge { limit });
        }
        Ok(OutboundStream {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            url: response.url().clone(),
            body: response.bytes_stream().boxed(),
            limits,
            deadline,
            read: 0,
        })
    }

    /// Sends the request and reads the body, failing with
    /// [`OutboundError::TooLarge`] as soon as it passes the bound.
    pub async fn send(self) -> Result<OutboundResponse, OutboundError> {
        let stream = self.send_streaming().await?;
        let (status, headers, url) = (stream.status, stream.headers.clone(), stream.url.clone());
        let body = stream.read_all().await?;
        Ok(OutboundResponse {
            status,
            headers,
            url,
            body,
        })
    }

    /// Sends the request and decodes a 2xx JSON answer as `T`; another status
    /// is [`OutboundError::Status`], an answer that is not a `T`
    /// [`OutboundError::Decode`].
    pub async fn send_json<T: DeserializeOwned>(self) -> Result<T, OutboundError> {
        let response = self.send().await?;
        if !response.is_success() {
            return Err(OutboundError::Status {
                status: response.status,
            });
        }
        response
            .json()
            .map_err(|e| OutboundError::Decode(e.to_string()))
    }
}

/// `wait`, shortened to what is left before `deadline`.
fn bounded(wait: Duration, deadline: Option<Instant>) -> Duration {
    match deadline {
        Some(at) => wait.min(at.saturating_duration_since(Instant::now())),
        None => wait,
    }
}

/// A response whose body is read as it arrives: each chunk within the idle
/// timeout, all of them within the size bound.
pub struct OutboundStream {
    pub status: u16,
    pub headers: HeaderMap,
    /// The final URL, after redirects.
    pub url: Url,
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    limits: Limits,
    deadline: Option<Instant>,
    read: usize,
}

impl std::fmt::Debug for OutboundStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutboundStream")
            .field("status", &self.status)
            .field("url", &self.url.as_str())
            .field("read", &self.read)
            .finish_non_exhaustive()
    }
}

impl OutboundStream {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The next chunk (`None` at the end). Fails with
    /// [`OutboundError::Timeout`] when the remote pauses longer than the idle
    /// timeout, [`OutboundError::TooLarge`] once the body passes the bound.
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>, OutboundError> {
        let wait = bounded(self.limits.idle_timeout, self.deadline);
        let next = tokio::time::timeout(wait, self.body.next())
            .await
            .map_err(|_| OutboundError::Timeout)?;
        let Some(chunk) = next else {
            return Ok(None);
        };
        let chunk = chunk.map_err(OutboundError::from_reqwest)?;
        let limit = self.limits.max_response_bytes;
        if self.read + chunk.len() > limit {
            return Err(OutboundError::TooLarge { limit });
        }
        self.read += chunk.len();
        Ok(Some(chunk))
    }

    /// Reads the rest of the body.
    pub async fn read_all(mut self) -> Result<Bytes, OutboundError> {
        let mut body = BytesMut::new();
        while let Some(chunk) = self.next_chunk().await? {
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    }

    /// The body as a stream of chunks (ends after the first error), e.g. to
    /// pass a provider's answer through `stoa_core::http::Sse`.
    pub fn into_stream(self) -> impl Stream<Item = Result<Bytes, OutboundError>> + Send {
        futures_util::stream::unfold(Some(self), |state| async move {
            let mut stream = state?;
            match stream.next_chunk().await {
                Ok(Some(chunk)) => Some((Ok(chunk), Some(stream))),
                Ok(None) => None,
                Err(err) => Some((Err(err), None)),
            }
        })
    }
}

/// A response read whole (within the bound).
#[derive(Debug, Clone)]
pub struct OutboundResponse {
    pub status: u16,
    pub headers: HeaderMap,
    /// The final URL, after redirects.
    pub url: Url,
    pub body: Bytes,
}

impl OutboundResponse {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}
