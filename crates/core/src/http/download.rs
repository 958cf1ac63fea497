//! File downloads: bytes or a stream, sent uncompressed with a
//! `Content-Disposition` that names the file.
//!
//! ```ignore
//! async fn download(ctx: AuthContext, id: Path<Uuid>) -> Result<Download, AppError> {
//!     let file = service.load(&ctx, *id).await?;
//!     Ok(Download::bytes(file.name, file.mime_type, file.content))
//! }
//! ```
//!
//! The filename is sent twice, as RFC 6266 asks: an ASCII fallback
//! (`filename="..."`, anything else replaced by `_`) and the exact UTF-8 name
//! (`filename*=UTF-8''...`). Control characters are dropped; quotes, backslashes
//! and slashes become `_`.

use std::error::Error as StdError;

use actix_web::body::{BodyStream, BoxBody, MessageBody, SizedStream};
use actix_web::http::header::{
    self, Charset, ContentDisposition, DispositionParam, DispositionType, ExtendedValue,
    HeaderValue,
};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, Responder};
use futures_util::Stream;

use super::compression::no_compression;

/// What the client does with the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// Save it (`Content-Disposition: attachment`).
    Attachment,
    /// Show it in the browser (`inline`: images, PDFs of public pages).
    Inline,
}

/// A file response (implements `Responder`).
pub struct Download {
    filename: String,
    content_type: String,
    disposition: Disposition,
    cache_control: Option<&'static str>,
    body: BoxBody,
}

impl Download {
    /// A file held in memory (`Content-Length` set).
    pub fn bytes(
        filename: impl Into<String>,
        content_type: impl Into<String>,
        content: impl Into<Bytes>,
    ) -> Self {
        Self::with_body(filename, content_type, content.into().boxed())
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
        Self::with_body(filename, content_type, BodyStream::new(stream).boxed())
    }

    /// A file streamed as it is read, of known length (`Content-Length` set, so
    /// clients can show progress).
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
        Self::with_body(
            filename,
            content_type,
            SizedStream::new(length, stream).boxed(),
        )
    }

    fn with_body(
        filename: impl Into<String>,
        content_type: impl Into<String>,
        body: BoxBody,
    ) -> Self {
        Self {
            filename: filename.into(),
            content_type: content_type.into(),
            disposition: Disposition::Attachment,
            cache_control: None,
            body,
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

    /// The `Content-Disposition` value.
    pub fn content_disposition(&self) -> ContentDisposition {
        content_disposition(&self.filename, self.disposition)
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

    fn respond_to(self, _req: &HttpRequest) -> HttpResponse {
        let mut builder = HttpResponse::Ok();
        let content_type = HeaderValue::from_str(&self.content_type)
            .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"));
        builder
            .insert_header((header::CONTENT_TYPE, content_type))
            .insert_header(self.content_disposition());
        if let Some(cache) = self.cache_control {
            builder.insert_header((header::CACHE_CONTROL, cache));
        }
        no_compression(&mut builder);
        builder.body(self.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filenames_are_safe_and_exact() {
        let cd = content_disposition("report.pdf", Disposition::Attachment).to_string();
        assert_eq!(cd, "attachment; filename=\"report.pdf\"");
        let cd = content_disposition("zażółć \"x\"/..\\a\r\nb.txt", Disposition::Inline);
        let text = cd.to_string();
        assert!(
            text.starts_with("inline; filename=\"za____ _x__.._ab.txt\""),
            "{text}"
        );
        assert!(
            text.contains("filename*=UTF-8''za%C5%BC%C3%B3%C5%82%C4%87"),
            "{text}"
        );
        assert!(!text.contains('\n') && !text.contains('\r'));
        let cd = content_disposition(" \u{7} ", Disposition::Attachment).to_string();
        assert_eq!(cd, "attachment; filename=\"download\"");
    }
}
