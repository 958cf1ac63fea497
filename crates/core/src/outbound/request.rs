//! Sending a request and reading its response within the size bound.

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, Url};

use super::OutboundError;

/// A request being built; [`OutboundRequest::send`] sends it and reads the
/// bounded response.
#[derive(Debug)]
pub struct OutboundRequest {
    pub(super) builder: RequestBuilder,
    pub(super) max_response_bytes: usize,
}

impl OutboundRequest {
    /// Adjusts the request (headers, body, auth) with reqwest's builder.
    pub fn with(mut self, f: impl FnOnce(RequestBuilder) -> RequestBuilder) -> Self {
        self.builder = f(self.builder);
        self
    }

    pub fn header(self, name: &str, value: &str) -> Self {
        self.with(|b| b.header(name, value))
    }

    /// A JSON body.
    pub fn json(self, body: &serde_json::Value) -> Self {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        self.with(|b| {
            b.header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes)
        })
    }

    /// A lower response bound than the configured one for this request.
    pub fn max_response_bytes(mut self, limit: usize) -> Self {
        self.max_response_bytes = self.max_response_bytes.min(limit);
        self
    }

    /// Sends the request and reads the body, failing with
    /// [`OutboundError::TooLarge`] as soon as it passes the bound.
    pub async fn send(self) -> Result<OutboundResponse, OutboundError> {
        let limit = self.max_response_bytes;
        let response = self
            .builder
            .send()
            .await
            .map_err(OutboundError::from_reqwest)?;
        if response
            .content_length()
            .is_some_and(|len| len > limit as u64)
        {
            return Err(OutboundError::TooLarge { limit });
        }
        let status = response.status();
        let headers = response.headers().clone();
        let url = response.url().clone();
        let mut body = BytesMut::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(OutboundError::from_reqwest)?;
            if body.len() + chunk.len() > limit {
                return Err(OutboundError::TooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(OutboundResponse {
            status: status.as_u16(),
            headers,
            url,
            body: body.freeze(),
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
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}
