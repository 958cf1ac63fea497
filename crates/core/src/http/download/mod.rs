//! File downloads: bytes or a stream, sent uncompressed with a
//! `Content-Disposition` that names the file.
//!
//! ```ignore
//! async fn download(ctx: AuthContext, id: Path<Uuid>) -> Result<Download, AppError> {
//!     let file = service.load(&ctx, *id).await?;
//!     Ok(Download::bytes(file.name, file.mime_type, file.content)
//!         .etag(&file.checksum)
//!         .sandboxed())
//! }
//! ```
//!
//! The filename is sent twice, as RFC 6266 asks: an ASCII fallback
//! (`filename="..."`, anything else replaced by `_`) and the exact UTF-8 name
//! (`filename*=UTF-8''...`). Control characters are dropped; quotes, backslashes
//! and slashes become `_`.
//!
//! Conditional and partial requests (RFC 9110): with an [`etag`](Download::etag)
//! a `GET` whose `If-None-Match` names it is answered 304 without a body. A
//! file of known length that can be read from any offset ([`Download::bytes`],
//! [`Download::ranged`]) answers `Range: bytes=a-b` with 206 and
//! `Content-Range`, and an unsatisfiable range with 416 (`Content-Range:
//! bytes */<length>`); `If-Range` with another ETag, a malformed or a
//! multi-range header fall back to the whole file (200), as the RFC allows.
//! [`sandboxed`](Download::sandboxed) adds a `Content-Security-Policy` that
//! stops a served HTML or SVG file from running scripts or reaching anything.

use std::error::Error as StdError;
use std::ops::RangeInclusive;

use actix_web::body::{BodyStream, BoxBody, MessageBody, SizedStream};
use actix_web::http::header::{
    self, Charset, ContentDisposition, DispositionParam, DispositionType, ExtendedValue,
    HeaderValue,
};
use actix_web::http::{Method, StatusCode};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder, Responder};
use futures_util::Stream;

use super::compression::no_compression;
use super::headers::{IF_NONE_MATCH, IF_RANGE, RANGE};

mod range;

use range::{Wanted, parse_range};

/// The policy [`Download::sandboxed`] sends: nothing may load or run, the
/// document is in a unique origin with scripts, forms and popups off; inline
/// styles and embedded images still render (HTML mail, SVG drawings).
pub const SANDBOX_CSP: &str =
    "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'none'";

/// What the client does with the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// Save it (`Content-Disposition: attachment`).
    Attachment,
    /// Show it in the browser (`inline`: images, PDFs of public pages).
    Inline,
}

/// Opens the bytes `start..=end` of a ranged file as a body.
type OpenRange = Box<dyn FnOnce(RangeInclusive<u64>) -> BoxBody>;

/// Where the content comes from, and whether a part of it can be sent.
enum Source {
    /// In memory: any range is a slice.
    Bytes(Bytes),
    /// Read on demand from any offset (`Download::ranged`).
    Ranged { length: u64, open: OpenRange },
    /// A stream read once from the start: no ranges.
    Stream(BoxBody),
}

/// A file response (implements `Responder`).
pub struct Download {
    filename: String,
    content_type: String,
    disposition: Disposition,
    cache_control: Option<&'static str>,
    etag: Option<String>,
    csp: Option<String>,
    source: Source,
}

impl Download {
    /// A file held in memory (`Content-Length` set; ranges answered).
    pub fn bytes(
        filename: impl Into<String>,
        content_type: impl Into<String>,
        content: impl Into<Bytes>,
    ) -> Self {
        Self::with_source(filename, content_type, Source::Bytes(content.into()))
    }

    /// A file streamed as it is read, of unknown length (chunked).
    pub fn stream<S, E>(
        filename: impl Into<String>,
        content_type: impl Into<String>,
        stream: S,
    ) -> Self
    where
        S: Stream<Item = Result<Bytes, E>> + 'static,
        E: Into<Box<dyn StdError>> + 'static,
    {
        Self::with_source(
            filename,
            content_type,
            Source::Stream(BodyStream::new(stream).boxed()),
        )
    }

    /// A file streamed as it is read, of known length (`Content-Length` set, so
    /// clients can show progress). Read once from the start: use
    /// [`Download::ranged`] when the store can read from an offset.
    pub fn sized_stream<S, E>(
        filename: impl Into<String>,
        content_type: impl Into<String>,
        length: u64,
        stream: S,
    ) -> Self
    where
        S: Stream<Item = Result<Bytes, E>> + 'static,
        E: Into<Box<dyn StdError>> + 'static,
    {
        Self::with_source(
            filename,
            content_type,
            Source::Stream(SizedStream::new(length, stream).boxed()),
        )
    }

    /// A file of `length` bytes that `open(start..=end)` streams any part of
    /// (object storage's ranged reads): the whole file is `0..=length-1`, a
    /// `Range` request opens only its part. `open` is called at most once, and
    /// not at all for a 304 or 416.
    pub fn ranged<S, E>(
        filename: impl Into<String>,
        content_type: impl Into<String>,
        length: u64,
        open: impl FnOnce(RangeInclusive<u64>) -> S + 'static,
    ) -> Self
    where
        S: Stream<Item = Result<Bytes, E>> + 'static,
        E: Into<Box<dyn StdError>> + 'static,
    {
        let open: OpenRange = Box::new(move |range: RangeInclusive<u64>| {
            let len = range.end() + 1 - range.start();
            SizedStream::new(len, open(range)).boxed()
        });
        Self::with_source(filename, content_type, Source::Ranged { length, open })
    }

    fn with_source(
        filename: impl Into<String>,
        content_type: impl Into<String>,
        source: Source,
    ) -> Self {
        Self {
            filename: filename.into(),
            content_type: content_type.into(),
            disposition: Disposition::Attachment,
            cache_control: None,
            etag: None,
            csp: None,
            source,
        }
    }

    /// Shown in the browser rather than saved.
    pub fn inline(mut self) -> Self {
        self.disposition = Disposition::Inline;
        self
    }

    /// Sets `Cache-Control` (none by default: the client decides).
    pub fn cache_control(mut self, value: &'static str) -> Self {
        self.cache_control = Some(value);
        self
    }

    /// A strong validator for this content (a checksum, a version id): sent
    /// as `ETag`, compared with `If-None-Match` (304) and `If-Range`. Only
    /// visible ASCII other than `"` is kept, so any id is safe to pass.
    pub fn etag(mut self, tag: &str) -> Self {
        let clean: String = tag
            .chars()
            .filter(|c| c.is_ascii_graphic() && *c != '"')
            .collect();
        self.etag = (!clean.is_empty()).then(|| format!("\"{clean}\""));
        self
    }

    /// Adds `Content-Security-Policy: `[`SANDBOX_CSP`]: for user-uploaded
    /// files shown inline, so an HTML or SVG upload cannot run script in the
    /// API's origin.
    pub fn sandboxed(self) -> Self {
        self.content_security_policy(SANDBOX_CSP)
    }

    /// Sends this `Content-Security-Policy`.
    pub fn content_security_policy(mut self, policy: impl Into<String>) -> Self {
        self.csp = Some(policy.into());
        self
    }

    /// The `Content-Disposition` value.
    pub fn content_disposition(&self) -> ContentDisposition {
        content_disposition(&self.filename, self.disposition)
    }

    /// The full length, when parts of the file can be sent.
    fn rangeable_length(&self) -> Option<u64> {
        match &self.source {
            Source::Bytes(bytes) => Some(bytes.len() as u64),
            Source::Ranged { length, .. } => Some(*length),
            Source::Stream(_) => None,
        }
    }

    /// Whether `If-None-Match` names this file's ETag (or is `*`).
    fn not_modified(&self, req: &HttpRequest) -> bool {
        let Some(etag) = &self.etag else {
            return false;
        };
        if !matches!(*req.method(), Method::GET | Method::HEAD) {
            return false;
        }
        let Some(value) = req
            .headers()
            .get(IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
        else {
            return false;
        };
        // Weak comparison (RFC 9110 13.1.2): `W/"x"` matches `"x"`.
        value.split(',').map(str::trim).any(|candidate| {
            candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == etag
        })
    }

    /// The range the request asks for, when it should be honoured.
    fn wanted_range(&self, req: &HttpRequest, length: u64) -> Option<Wanted> {
        if *req.method() != Method::GET {
            return None;
        }
        let range = req.headers().get(RANGE)?.to_str().ok()?;
        if let Some(if_range) = req.headers().get(IF_RANGE) {
            // Only a strong ETag match keeps the range; a date or another tag
            // means the client's part may be of another version: send it all.
            let current = self.etag.as_deref()?;
            if if_range.to_str().ok()?.trim() != current {
                return None;
            }
        }
        parse_range(range, length)
    }

    fn head(&self, status: StatusCode) -> HttpResponseBuilder {
        let mut builder = HttpResponse::build(status);
        if let Some(etag) = &self.etag {
            builder.insert_header((header::ETAG, etag.as_str()));
        }
        if let Some(cache) = self.cache_control {
            builder.insert_header((header::CACHE_CONTROL, cache));
        }
        if let Some(csp) = &self.csp {
            builder.insert_header((header::CONTENT_SECURITY_POLICY, csp.as_str()));
        }
        if self.rangeable_length().is_some() {
            builder.insert_header((header::ACCEPT_RANGES, "bytes"));
        }
        no_compression(&mut builder);
        builder
    }
}

/// `attachment` / `inline` with an ASCII fallback and the exact UTF-8 name.
pub fn content_disposition(filename: &str, disposition: Disposition) -> ContentDisposition {
    let clean: String = filename
        .chars()
        .filter(|c| !c.is_control())
        .map(|c| {
            if matches!(c, '"' | '\\' | '/') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let clean = clean.trim();
    let clean = if clean.is_empty() { "download" } else { clean };
    let ascii: String = clean
        .chars()
        .map(|c| if c.is_ascii() { c } else { '_' })
        .collect();
    let mut parameters = vec![DispositionParam::Filename(ascii.clone())];
    if ascii != clean {
        parameters.push(DispositionParam::FilenameExt(ExtendedValue {
            charset: Charset::Ext("UTF-8".into()),
            language_tag: None,
            value: clean.as_bytes().to_vec(),
        }));
    }
    ContentDisposition {
        disposition: match disposition {
            Disposition::Attachment => DispositionType::Attachment,
            Disposition::Inline => DispositionType::Inline,
        },
        parameters,
    }
}

impl Responder for Download {
    type Body = BoxBody;

    fn respond_to(self, req: &HttpRequest) -> HttpResponse {
        if self.not_modified(req) {
            return self.head(StatusCode::NOT_MODIFIED).finish();
        }
        let wanted = self
            .rangeable_length()
            .and_then(|length| Some((length, self.wanted_range(req, length)?)));
        let content_type = HeaderValue::from_str(&self.content_type)
            .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"));
        match wanted {
            Some((length, Wanted::Unsatisfiable)) => self
                .head(StatusCode::RANGE_NOT_SATISFIABLE)
                .insert_header((header::CONTENT_RANGE, format!("bytes */{length}")))
                .json(serde_json::json!({ "error": "Range not satisfiable" })),
            Some((length, Wanted::Part(range))) => {
                let mut builder = self.head(StatusCode::PARTIAL_CONTENT);
                builder
                    .insert_header((header::CONTENT_TYPE, content_type))
                    .insert_header(self.content_disposition())
                    .insert_header((
                        header::CONTENT_RANGE,
                        format!("bytes {}-{}/{length}", range.start(), range.end()),
                    ));
                builder.body(self.source.part(range))
            }
            None => {
                let mut builder = self.head(StatusCode::OK);
                builder
                    .insert_header((header::CONTENT_TYPE, content_type))
                    .insert_header(self.content_disposition());
                builder.body(self.source.whole())
            }
        }
    }
}

impl Source {
    fn whole(self) -> BoxBody {
        match self {
            Self::Bytes(bytes) => bytes.boxed(),
            Self::Stream(body) => body,
            Self::Ranged { length: 0, .. } => Bytes::new().boxed(),
            Self::Ranged { length, open } => open(0..=length - 1),
        }
    }

    /// `range` lies within the file (checked by `parse_range`).
    fn part(self, range: RangeInclusive<u64>) -> BoxBody {
        match self {
            Self::Bytes(bytes) => {
                let (start, end) = (*range.start() as usize, *range.end() as usize);
                bytes
                    .slice(start..=end.min(bytes.len().saturating_sub(1)))
                    .boxed()
            }
            Self::Ranged { open, .. } => open(range),
            Self::Stream(body) => body,
        }
    }
}

#[cfg(test)]
mod tests;
