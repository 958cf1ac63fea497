//! Text of PDF and DOCX uploads for `content`, in pure Rust (lopdf, zip,
//! quick-xml), bounded in memory and time.
//!
//! Bounds, all checked before the parsers allocate for them:
//! - files over [`MAX_INPUT`] are not read for text (`content` stays null);
//! - everything decompressed (a DOCX's `word/document.xml`, every Flate
//!   stream of a PDF, inflated once up front to measure it) stops at
//!   [`MAX_INFLATED`]: a compression bomb gets no text, never the memory;
//!   a PDF using LZW (unbounded to measure the same way) gets none either;
//! - at most [`PARSERS`] extractions run at once, off the async executor, and
//!   the upload waits at most [`TIME_LIMIT`] for one (a runaway parse keeps
//!   its permit until it ends, so runaways cannot pile up);
//! - the text kept is cut at the upload's `MAX_CONTENT_BYTES`.

use std::io::{Cursor, Read};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use quick_xml::events::Event;
use tokio::sync::Semaphore;

use crate::upload::MAX_CONTENT_BYTES;

/// Files larger than this are stored without extracted text.
pub const MAX_INPUT: u64 = 16 * 1024 * 1024;
/// Decompressed bytes one extraction may produce in all.
pub const MAX_INFLATED: u64 = 32 * 1024 * 1024;
/// Extractions running at once per process.
pub const PARSERS: usize = 2;
/// How long an upload waits for its text.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);
/// Pages of a PDF read for text (the kept text is cut long before).
const MAX_PAGES: usize = 200;

const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

static PERMITS: LazyLock<Arc<Semaphore>> = LazyLock::new(|| Arc::new(Semaphore::new(PARSERS)));

/// A document format whose text is extracted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Document {
    Pdf,
    Docx,
}

impl Document {
    /// The format of a stored MIME type, if its text is extracted.
    pub fn of(mime: &str) -> Option<Self> {
        match mime {
            "application/pdf" => Some(Self::Pdf),
            DOCX => Some(Self::Docx),
            _ => None,
        }
    }
}

/// The document's text, or `None` when it has none, cannot be parsed, or
/// breaks a bound.
pub async fn text(kind: Document, bytes: Vec<u8>) -> Option<String> {
    let permit = PERMITS.clone().acquire_owned().await.ok()?;
    let task = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let raw = match kind {
            Document::Pdf => pdf_text(&bytes),
            Document::Docx => docx_text(&bytes),
        }?;
        tidy(&raw)
    });
    tokio::time::timeout(TIME_LIMIT, task).await.ok()?.ok()?
}

/// Control characters out (but line breaks and tabs), cut at the content
/// bound on a character boundary, trimmed; `None` when nothing is left.
fn tidy(raw: &str) -> Option<String> {
    let mut out = String::new();
    for c in raw.chars() {
        if c.is_control() && !matches!(c, '\n' | '\t' | '\r') {
            continue;
        }
        if out.len() + c.len_utf8() > MAX_CONTENT_BYTES {
            break;
        }
        out.push(c);
    }
    let text = out.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// The paragraphs of `word/document.xml`: `w:t` runs, `w:tab` and `w:br`,
/// a line break per `w:p`.
fn docx_text(bytes: &[u8]) -> Option<String> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).ok()?;
    let entry = archive.by_name("word/document.xml").ok()?;
    let mut xml = Vec::new();
    entry.take(MAX_INFLATED + 1).read_to_end(&mut xml).ok()?;
    if xml.len() as u64 > MAX_INFLATED {
        return None;
    }
    let mut reader = quick_xml::Reader::from_reader(xml.as_slice());
    let mut buf = Vec::new();
    let mut out = String::new();
    let mut in_text = false;
    loop {
        match reader.read_event_into(&mut buf).ok()? {
            Event::Start(e) if e.local_name().as_ref() == b"t" => in_text = true,
            Event::End(e) => match e.local_name().as_ref() {
                b"t" => in_text = false,
                b"p" => out.push('\n'),
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                b"tab" => out.push('\t'),
                b"br" | b"cr" => out.push('\n'),
                _ => {}
            },
            Event::Text(t) if in_text => out.push_str(&t.decode().ok()?),
            Event::CData(t) if in_text => out.push_str(&t.decode().ok()?),
            Event::GeneralRef(r) if in_text => {
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    out.push(c);
                } else {
                    let named = match r.decode().ok()?.as_ref() {
                        "amp" => '&',
                        "lt" => '<',
                        "gt" => '>',
                        "quot" => '"',
                        "apos" => '\'',
                        _ => '\u{fffd}',
                    };
                    out.push(named);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        if out.len() > MAX_CONTENT_BYTES {
            break;
        }
        buf.clear();
    }
    Some(out)
}

/// Where each `stream` keyword's data starts (after its line break).
fn stream_starts(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    const KEYWORD: &[u8] = b"stream";
    bytes
        .windows(KEYWORD.len())
        .enumerate()
        .filter(move |(i, w)| *w == KEYWORD && !(i >= &3 && &bytes[i - 3..*i] == b"end"))
        .map(|(i, _)| {
            let mut start = i + KEYWORD.len();
            if bytes.get(start) == Some(&b'\r') {
                start += 1;
            }
            if bytes.get(start) == Some(&b'\n') {
                start += 1;
            }
            start
        })
}

/// Whether every Flate stream of the file inflates within the bound, in all.
/// Streams are inflated (and dropped) one by one only to count their bytes.
fn inflates_within_bound(bytes: &[u8]) -> bool {
    let mut total: u64 = 0;
    for start in stream_starts(bytes) {
        let data = &bytes[start.min(bytes.len())..];
        let mut decoder = flate2::read::ZlibDecoder::new(data).take(MAX_INFLATED + 1 - total);
        // Not zlib data (an image, an uncompressed stream): lopdf reads it
        // as stored, within the file's own size.
        let Ok(inflated) = std::io::copy(&mut decoder, &mut std::io::sink()) else {
            continue;
        };
        total += inflated;
        if total > MAX_INFLATED {
            return false;
        }
    }
    true
}

fn pdf_text(bytes: &[u8]) -> Option<String> {
    if bytes
        .windows(b"/LZWDecode".len())
        .any(|w| w == b"/LZWDecode")
    {
        return None;
    }
    if !inflates_within_bound(bytes) {
        return None;
    }
    let doc = lopdf::Document::load_mem(bytes).ok()?;
    let pages: Vec<u32> = doc.get_pages().keys().copied().take(MAX_PAGES).collect();
    let mut out = String::new();
    for chunk in doc.extract_text_chunks(&pages).into_iter().flatten() {
        out.push_str(&chunk);
        if out.len() > MAX_CONTENT_BYTES {
            break;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_data_starts_after_the_keyword_line() {
        let pdf = b"1 0 obj<</Length 3>>stream\r\nabc\nendstream endobj";
        let starts: Vec<usize> = stream_starts(pdf).collect();
        assert_eq!(starts.len(), 1);
        assert_eq!(&pdf[starts[0]..starts[0] + 3], b"abc");
    }

    #[test]
    fn text_is_cut_on_a_character_boundary() {
        let long = "é".repeat(MAX_CONTENT_BYTES);
        let kept = tidy(&long).unwrap();
        assert!(kept.len() <= MAX_CONTENT_BYTES);
        assert!(kept.chars().all(|c| c == 'é'));
        assert_eq!(tidy(" \u{0}\u{7} "), None);
    }

    #[test]
    fn only_pdf_and_docx_are_documents() {
        assert_eq!(Document::of("application/pdf"), Some(Document::Pdf));
        assert_eq!(Document::of(DOCX), Some(Document::Docx));
        assert_eq!(Document::of("image/png"), None);
    }
}
